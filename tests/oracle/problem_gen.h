#pragma once
// RapidCheck generators for small attention problems that exercise every oracle feature: GQA ratios,
// Sk in {0, 1, 2, 3, ...}, odd head dims, Dv != D, both causal alignments, windows, soft-cap, ALiBi,
// per-batch key lengths, BHSD and padded strides.
#include <rapidcheck.h>

#include <cmath>

#include "flashprobe/core/problem.h"

namespace flashprobe::test {

struct GenLimits {
  bool masks = true;     // causal / windows
  bool extras = true;    // soft-cap, ALiBi, per-batch key lengths
  bool strides = true;   // BHSD and padded layouts
  int max_s = 24;
};

inline Strides padded_strides(int seq, int heads, int dim, int pad) {
  const std::int64_t row = std::int64_t{heads} * (dim + pad);
  return {seq * row, row, dim + pad, 1};
}

inline rc::Gen<AttnProblem> gen_problem(GenLimits lim = {}) {
  return rc::gen::exec([lim] {
    AttnProblem p;
    p.batch = *rc::gen::inRange(1, 3);
    p.hkv = *rc::gen::element(1, 1, 2, 3);
    p.hq = p.hkv * *rc::gen::element(1, 2, 3, 5, 6);
    p.sq = *rc::gen::inRange(1, lim.max_s + 1);
    p.sk = *rc::gen::oneOf(rc::gen::element(0, 1, 2, 3), rc::gen::inRange(0, lim.max_s + 1));
    p.d = *rc::gen::oneOf(rc::gen::element(1, 3, 8, 40, 59), rc::gen::inRange(1, 72));
    p.dv = *rc::gen::oneOf(rc::gen::just(p.d), rc::gen::inRange(1, 40));
    p.dtype = *rc::gen::element(DType::f16, DType::bf16, DType::f32);
    p.out_dtype = p.dtype;
    if (*rc::gen::arbitrary<bool>()) p.scale = *rc::gen::element(0.05, 0.3, 1.0);
    if (lim.masks) {
      p.causal = *rc::gen::element(Causal::none, Causal::bottom_right, Causal::top_left);
      if (*rc::gen::element(0, 0, 1)) p.window_left = *rc::gen::inRange(0, 6);
      if (*rc::gen::element(0, 0, 1)) p.window_right = *rc::gen::inRange(0, 6);
      if (p.sk > p.sq && *rc::gen::arbitrary<bool>()) p.kv_offset = p.sk - p.sq;  // a KV cache: sk = kv_offset + sq
    }
    if (lim.extras) {
      if (*rc::gen::element(0, 0, 1)) p.softcap = *rc::gen::element(0.5, 3.0, 20.0);
      if (*rc::gen::element(0, 0, 1)) {
        for (int h = 0; h < p.hq; ++h) p.alibi_slopes.push_back(std::ldexp(1.0, -h - 1));
      }
      if (p.kv_offset == 0 && *rc::gen::element(0, 0, 1))
        for (int b = 0; b < p.batch; ++b) p.seqlens_k.push_back(*rc::gen::inRange(0, p.sk + 1));
    }
    if (lim.strides) {
      const int layout = *rc::gen::element(0, 1, 2);
      if (layout == 1) p.with_layout(TensorLayout::bhsd);
      if (layout == 2) {
        p.q = padded_strides(p.sq, p.hq, p.d, 3);
        p.k = padded_strides(std::max(p.sk, 1), p.hkv, p.d, 1);
        p.v = padded_strides(std::max(p.sk, 1), p.hkv, p.dv, 2);
        p.o = padded_strides(p.sq, p.hq, p.dv, 5);
      }
    }
    return p;
  });
}

}  // namespace flashprobe::test

namespace rc {
template <>
struct Arbitrary<flashprobe::AttnProblem> {
  static Gen<flashprobe::AttnProblem> arbitrary() { return flashprobe::test::gen_problem(); }
};
}  // namespace rc

namespace flashprobe {
inline void showValue(const AttnProblem& p, std::ostream& os) { os << p.id(); }
}  // namespace flashprobe
