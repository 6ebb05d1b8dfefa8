#pragma once
// A GQA/MQA problem as the equivalent MHA problem: every K/V head repeated over the query heads of
// its group (AttnProblem::kv_head), K and V contiguous BSHD. The gradients of the GQA problem are the
// MHA problem's with dK and dV summed over each group (tests/oracle/test_backward.cpp on the oracle,
// tests/kernels/test_backward_gpu.cpp on the kernels).
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::testing {

struct MhaEquivalent {
  AttnProblem p;
  AttnInputs in;
};

inline MhaEquivalent gqa_as_mha(const AttnProblem& p, const AttnInputs& in) {
  MhaEquivalent m{p, in};
  m.p.hkv = p.hq;
  m.p.k = m.p.v = Strides{};
  m.in.k = Tensor(p.dtype, m.p.k_span());
  m.in.v = Tensor(p.dtype, m.p.v_span());
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hq; ++h) {
        const int kv = p.kv_head(h);
        for (int x = 0; x < p.d; ++x) m.in.k.set(offset(m.p.k_strides(), b, j, h, x), in.k.get(offset(p.k_strides(), b, j, kv, x)));
        for (int x = 0; x < p.dv; ++x) m.in.v.set(offset(m.p.v_strides(), b, j, h, x), in.v.get(offset(p.v_strides(), b, j, kv, x)));
      }
  return m;
}

}  // namespace flashprobe::testing
