#pragma once
// The random problems of test_backward_gpu's RandomProblemsAgreeWithTheOracle, drawn in one place so
// that a soak's problems can be drawn again without a GPU from its seed (backward_draws.cpp counts
// them per kernel and dtype): every feature in play, small enough for the CPU oracle. One case takes
// a problem (drawn again until `only`, the kernel of a one-kernel soak, takes it; null: every
// problem) and then two numbers of the same generator, the seeds of its inputs and of dO.
//   std::mt19937_64 rng(seed);
//   const BackwardDraw c = next_backward_draw(rng, dev, only);
//   const AttnInputs in = random_inputs(c.p, c.inputs_seed);
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/backward.h"

namespace flashprobe::testing {

inline AttnProblem random_backward_problem(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<int> v) { return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)); };
  auto coin = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  auto range = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    AttnProblem p;
    p.batch = range(1, 3);
    p.hkv = pick({1, 1, 2, 3});
    p.hq = p.hkv * pick({1, 2, 3, 4});
    p.sq = pick({1, 2, 7, 16, 33, 64, 96});
    p.sk = pick({0, 1, 5, 8, 9, 31, 64, 100, 160});
    p.d = pick({16, 40, 59, 64, 64, 96, 128, 128, 200, 256});
    p.dv = coin(0.7) ? p.d : pick({8, 40, 64, 128});
    p.dtype = p.out_dtype = coin(0.15) ? DType::f32 : coin(0.5) ? DType::f16 : DType::bf16;
    p.causal = pick({0, 1, 1, 2}) == 0 ? Causal::none : coin(0.5) ? Causal::bottom_right : Causal::top_left;
    if (coin(0.2)) p.window_left = pick({0, 3, 20});
    if (coin(0.1)) p.window_right = pick({0, 5});
    if (coin(0.15)) p.softcap = pick({2, 5, 30});
    if (coin(0.15))
      for (int h = 0; h < p.hq; ++h) p.alibi_slopes.push_back(std::ldexp(1.0, -(h % 8) - 1));
    if (coin(0.15))
      for (int b = 0; b < p.batch; ++b) p.seqlens_k.push_back(range(0, p.sk));
    if (coin(0.3)) p.with_layout(TensorLayout::bhsd);
    if (!has_errors(problem_errors(p))) return p;
  }
}

struct BackwardDraw {
  AttnProblem p;
  std::uint64_t inputs_seed = 0;  // random_inputs(p, inputs_seed)
  std::uint64_t grads_seed = 0;   // dO's (test_backward_gpu's backward_inputs)
};

inline BackwardDraw next_backward_draw(std::mt19937_64& rng, const DeviceInfo& dev, const kernels::BackwardKernelInfo* only) {
  BackwardDraw c;
  c.p = random_backward_problem(rng);
  while (only && !only->supports(dev, c.p)) c.p = random_backward_problem(rng);
  c.inputs_seed = rng();
  c.grads_seed = rng();
  return c;
}

}  // namespace flashprobe::testing
