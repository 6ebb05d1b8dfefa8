#pragma once
// The backward problem with large logits that test_backward_gpu runs on every backward kernel
// (FiniteWhereTheOracleIsWithLargeLogits) and that the CPU suite checks stays bounded by the
// gradient oracle (GradCheckLogits.TheGpuLargeLogitProblemIsBounded): one definition for both.
#include "flashprobe/core/problem.h"
#include <cstdint>

#include "flashprobe/core/tensor.h"

namespace flashprobe::testing {

// Batch 1, 2 query heads on 1 KV head, 40 x 90, d 64, bottom-right causal.
inline AttnProblem large_logit_backward_problem(DType t) {
  AttnProblem p;
  p.batch = 1; p.hq = 2; p.hkv = 1; p.sq = 40; p.sk = 90; p.d = p.dv = 64;
  p.dtype = p.out_dtype = t;
  p.causal = Causal::bottom_right;
  return p;
}

// Inputs of magnitude 4: logits in the hundreds (exp(s - LSE) must not overflow); dO's seed is
// kLargeLogitGradsSeed.
inline AttnInputs large_logit_backward_inputs(const AttnProblem& p) {
  InputDist dist;
  dist.magnitude = 4.0;
  return random_inputs(p, 5, dist);
}
inline constexpr std::uint64_t kLargeLogitGradsSeed = 6;

}  // namespace flashprobe::testing
