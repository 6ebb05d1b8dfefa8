#pragma once
// What a backward kernel reads besides Q, K, V in the gradient-check tests: a random dO and the
// emulated forward's O and LSE (tests/oracle's gradient-check tests and test_backward_gpu).
#include <cstdint>

#include "flashprobe/oracle/backward.h"
#include "flashprobe/oracle/reference.h"

namespace flashprobe::oracle::testing {

inline BackwardInputs backward_inputs(const AttnProblem& p, const AttnInputs& in, std::uint64_t seed) {
  const Reference f = emulate_low_precision(p, in);
  BackwardInputs bw{random_normal(p.out_dtype, p.o_span(), seed), Tensor(p.out_dtype, p.o_span()), {}};
  const Strides os = p.o_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) bw.o.set(offset(os, b, i, h, x), f.o[f.o_index(p, b, i, h, x)]);
  bw.lse.assign(f.lse.begin(), f.lse.end());
  return bw;
}

}  // namespace flashprobe::oracle::testing
