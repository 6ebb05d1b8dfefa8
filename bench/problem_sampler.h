#pragma once
// Random attention problems for the calibration: edge-biased like the property tests (tiny and odd
// Sk, odd head dims, GQA ratios 3/5/6, windows, soft-cap, ALiBi, per-batch key lengths), with the
// work per problem capped so that thousands of them run in minutes on two cores.
#include <random>

#include "flashprobe/core/problem.h"

namespace flashprobe::bench {

inline AttnProblem sample_problem(std::mt19937_64& rng, double max_macs) {
  auto pick = [&](std::initializer_list<int> v) {
    return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
  };
  auto coin = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  for (;;) {
    AttnProblem p;
    p.batch = pick({1, 1, 2, 3});
    const int group = pick({1, 1, 2, 3, 4, 5, 6});
    p.hkv = pick({1, 1, 2, 3});
    p.hq = p.hkv * group;
    p.sq = pick({1, 2, 3, 5, 7, 13, 16, 31, 64, 100, 128});
    p.sk = pick({1, 2, 3, 4, 5, 7, 16, 33, 64, 100, 128, 257, 512, 1000, 2048});
    p.d = pick({16, 32, 40, 59, 64, 80, 96, 111, 128, 256});
    p.dv = coin(0.8) ? p.d : pick({16, 40, 64, 128});
    p.dtype = coin(0.1) ? DType::f32 : coin(0.5) ? DType::f16 : DType::bf16;
    p.out_dtype = coin(0.85) ? p.dtype : DType::f32;
    const int c = pick({0, 1, 1, 2});
    p.causal = c == 0 ? Causal::none : c == 1 ? Causal::bottom_right : Causal::top_left;
    if (p.causal != Causal::none && p.sq > p.sk && coin(0.7)) p.sq = p.sk;  // fewer all-empty rows
    if (coin(0.15)) p.window_left = pick({0, 1, 3, 16, 100});
    if (coin(0.1)) p.window_right = pick({0, 2, 16});
    if (coin(0.1)) p.softcap = pick({5, 30, 50});
    if (coin(0.1)) {
      p.alibi_slopes.resize(static_cast<std::size_t>(p.hq));
      for (int h = 0; h < p.hq; ++h) p.alibi_slopes[static_cast<std::size_t>(h)] = std::ldexp(1.0, -(h % 8) - 1);
    }
    if (coin(0.1) && p.batch > 1) {
      p.seqlens_k.resize(static_cast<std::size_t>(p.batch));
      for (auto& s : p.seqlens_k) s = std::uniform_int_distribution<int>(0, p.sk)(rng);
    }
    if (coin(0.2) && p.sk > p.sq && p.seqlens_k.empty()) p.kv_offset = p.sk - p.sq;  // a KV cache
    if (coin(0.1)) p.scale = pick({1, 2, 4}) / std::sqrt(static_cast<double>(p.d));
    const double macs = double(p.batch) * p.hq * p.sq * p.sk * (p.d + p.dv);
    if (macs <= max_macs && !has_errors(validate(p))) return p;
  }
}

}  // namespace flashprobe::bench
