// The backward kernels on the GPU (label gpu, skips without a device): gradients agree with the
// oracle (check_backward) over a feature grid and every dtype, guard bands intact and every gradient
// written, finite where the oracle is, deterministic mode bitwise equal over FLASHPROBE_BWD_REPEATS
// runs (default 20), GQA gradients equal the summed gradients of the repeated-head MHA problem, and
// every backward mutant fails at least one case; and FLASHPROBE_BWD_CASES random problems (default
// 100, seed FLASHPROBE_BWD_SEED) per kernel, the soak's knob.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>

#include "../common/gpu_skip.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/mutants.h"
#include "flashprobe/oracle/grad_check.h"
#include "flashprobe/oracle/reference.h"

namespace flashprobe::kernels {
namespace {

struct Case {
  AttnProblem p;
  std::uint64_t seed;
};

// Every feature, small enough for the CPU oracle: tails of the 8-key blocks, GQA/MQA, both causal
// alignments, windows, soft-cap, ALiBi, per-batch key lengths (one empty), rows that see no key,
// odd and large head dims, Dv != D, BHSD and padded strides.
std::vector<Case> grid(DType t) {
  std::vector<Case> v;
  std::uint64_t seed = 1;
  auto add = [&](AttnProblem p) {
    p.dtype = p.out_dtype = t;
    v.push_back({p, seed++});
  };
  for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left})
    for (int variant = 0; variant < 8; ++variant) {
      AttnProblem p;
      p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 37; p.sk = 53; p.d = p.dv = 64;
      p.causal = c;
      switch (variant) {
        case 1: p.hq = 6; p.hkv = 1; p.d = 59; p.dv = 40; break;
        case 2: p.window_left = 5; p.window_right = 3; break;
        case 3: p.softcap = 2; p.scale = 0.5; break;
        case 4: p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625}; break;
        case 5: p.seqlens_k = {0, 29}; p.with_layout(TensorLayout::bhsd); break;
        case 6: p.sq = 60; p.sk = 17; p.d = p.dv = 256; break;  // bottom-right: rows that see no key
        case 7: p.d = 128; p.dv = 96;
                p.q = {37 * 4 * 136, 4 * 136, 136, 1}; p.o = {37 * 4 * 100, 4 * 100, 100, 1}; break;
        default: break;
      }
      add(p);
    }
  return v;
}

oracle::BackwardInputs backward_inputs(const AttnProblem& p, const AttnInputs& in, std::uint64_t seed) {
  const oracle::Reference f = oracle::emulate_low_precision(p, in);
  oracle::BackwardInputs bw{random_normal(p.out_dtype, p.o_span(), seed), Tensor(p.out_dtype, p.o_span()), {}};
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) bw.o.set(offset(p.o_strides(), b, i, h, x), f.o[f.o_index(p, b, i, h, x)]);
  bw.lse.assign(f.lse.begin(), f.lse.end());
  return bw;
}

struct Outcome {
  bool pass = false;
  std::string why;
  BackwardRunResult run;
};

Outcome judge(const BackwardKernelInfo& k, const AttnProblem& p, const AttnInputs& in, const oracle::BackwardInputs& bw) {
  Outcome o;
  o.run = run_backward(k, p, in, {bw.dout, bw.o, bw.lse});
  const oracle::BackwardCheckResult r = oracle::check_backward(p, in, bw, {o.run.dq, o.run.dk, o.run.dv});
  o.pass = r.pass && o.run.clean();
  o.why = r.pass ? o.run.describe() : r.summary();
  return o;
}


TEST(BackwardGpu, GradientsAgreeWithTheOracleOnTheGrid) {
  FP_SKIP_WITHOUT_GPU();
  int run = 0;
  std::vector<std::string> failures;
  for (const BackwardKernelInfo& k : backward_kernels())
    for (DType t : {DType::f16, DType::bf16, DType::f32})
      for (const Case& c : grid(t)) {
        const AttnInputs in = random_inputs(c.p, c.seed);
        const oracle::BackwardInputs bw = backward_inputs(c.p, in, c.seed + 100);
        const Outcome o = judge(k, c.p, in, bw);
        ++run;
        if (!o.pass) failures.push_back(k.name + " " + c.p.id() + ": " + o.why);
      }
  std::cout << "[backward grid] " << run << " case(s) run, " << run - static_cast<int>(failures.size()) << " passed\n";
  for (auto& f : failures) std::cout << "  FAIL " << f << "\n";
  EXPECT_TRUE(failures.empty()) << failures.front();
}

int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e && std::atoi(e) > 0 ? std::atoi(e) : fallback;
}

// A random valid problem with every feature in play (CPU-oracle sized).
AttnProblem random_problem(std::mt19937_64& rng) {
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
    p.d = pick({16, 40, 59, 64, 96, 128, 200, 256});
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

TEST(BackwardGpu, RandomProblemsAgreeWithTheOracle) {
  FP_SKIP_WITHOUT_GPU();
  const int cases = env_int("FLASHPROBE_BWD_CASES", 100);
  const std::uint64_t seed = static_cast<std::uint64_t>(env_int("FLASHPROBE_BWD_SEED", 1));
  std::mt19937_64 rng(seed);
  int run = 0;
  std::vector<std::string> failures;
  for (int c = 0; c < cases; ++c) {
    const AttnProblem p = random_problem(rng);
    const AttnInputs in = random_inputs(p, rng());
    const oracle::BackwardInputs bw = backward_inputs(p, in, rng());
    for (const BackwardKernelInfo& k : backward_kernels()) {
      const Outcome o = judge(k, p, in, bw);
      ++run;
      if (!o.pass) failures.push_back(k.name + " case " + std::to_string(c) + " (seed " + std::to_string(seed) + ") " + p.id() + ": " + o.why);
    }
  }
  std::cout << "[backward random] " << run << " run(s), " << run - static_cast<int>(failures.size()) << " passed, "
            << failures.size() << " failed\n";
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) std::cout << "  FAIL " << failures[i] << "\n";
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(BackwardGpu, FiniteWhereTheOracleIsWithLargeLogits) {
  FP_SKIP_WITHOUT_GPU();
  for (const BackwardKernelInfo& k : backward_kernels())
    for (DType t : {DType::f16, DType::bf16}) {
      AttnProblem p;
      p.batch = 1; p.hq = 2; p.hkv = 1; p.sq = 40; p.sk = 90; p.d = p.dv = 64;
      p.dtype = p.out_dtype = t;
      p.causal = Causal::bottom_right;
      InputDist dist;
      dist.magnitude = 4.0;  // logits in the hundreds: exp(s - LSE) must not overflow
      const AttnInputs in = random_inputs(p, 5, dist);
      const Outcome o = judge(k, p, in, backward_inputs(p, in, 6));
      EXPECT_TRUE(o.pass) << k.name << " " << p.id() << ": " << o.why;
    }
}

TEST(BackwardGpu, DeterministicModeIsBitwiseStableOverRepeats) {
  FP_SKIP_WITHOUT_GPU();
  const BackwardKernelInfo* k = find_backward_kernel("tiled_bwd_det");
  ASSERT_NE(k, nullptr);
  AttnProblem p;
  p.batch = 2; p.hq = 8; p.hkv = 2; p.sq = 300; p.sk = 700; p.d = p.dv = 128;
  p.dtype = p.out_dtype = DType::bf16;
  p.causal = Causal::bottom_right;
  const AttnInputs in = random_inputs(p, 7);
  const oracle::BackwardInputs bw = backward_inputs(p, in, 8);
  const BackwardRunResult first = run_backward(*k, p, in, {bw.dout, bw.o, bw.lse});
  ASSERT_TRUE(first.clean()) << first.describe();
  const int n = env_int("FLASHPROBE_BWD_REPEATS", 20);
  for (int r = 1; r < n; ++r) {
    const BackwardRunResult again = run_backward(*k, p, in, {bw.dout, bw.o, bw.lse});
    ASSERT_EQ(again.dq.bytes, first.dq.bytes) << "dQ differs on repeat " << r;
    ASSERT_EQ(again.dk.bytes, first.dk.bytes) << "dK differs on repeat " << r;
    ASSERT_EQ(again.dv.bytes, first.dv.bytes) << "dV differs on repeat " << r;
  }
  std::cout << "[determinism] " << n << " runs of " << p.id() << " bitwise equal\n";
}

TEST(BackwardGpu, GqaGradientsEqualTheSummedMhaGradients) {
  FP_SKIP_WITHOUT_GPU();
  for (const BackwardKernelInfo& k : backward_kernels()) {
    AttnProblem p;
    p.batch = 1; p.hq = 6; p.hkv = 2; p.sq = 33; p.sk = 41; p.d = p.dv = 64;
    p.dtype = p.out_dtype = DType::f32;  // f32: the two problems' roundings differ only by summation order
    p.causal = Causal::top_left;
    AttnProblem m = p;
    m.hkv = 6;
    const AttnInputs in = random_inputs(p, 9);
    AttnInputs mi = in;
    mi.k = Tensor(p.dtype, m.k_span());
    mi.v = Tensor(p.dtype, m.v_span());
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < m.hkv; ++h) {
        for (int x = 0; x < p.d; ++x) mi.k.set(offset(m.k_strides(), 0, j, h, x), in.k.get(offset(p.k_strides(), 0, j, h / 3, x)));
        for (int x = 0; x < p.dv; ++x) mi.v.set(offset(m.v_strides(), 0, j, h, x), in.v.get(offset(p.v_strides(), 0, j, h / 3, x)));
      }
    const oracle::BackwardInputs bw = backward_inputs(p, in, 10);
    const BackwardRunResult g = run_backward(k, p, in, {bw.dout, bw.o, bw.lse});
    const BackwardRunResult gm = run_backward(k, m, mi, {bw.dout, bw.o, bw.lse});
    double worst = 0, scale = 0, dq_worst = 0;
    for (std::int64_t e = 0; e < p.q_span(); ++e) dq_worst = std::max(dq_worst, std::abs(g.dq.get(e) - gm.dq.get(e)));
    for (int j = 0; j < p.sk; ++j)
      for (int kv = 0; kv < p.hkv; ++kv)
        for (int x = 0; x < p.d; ++x) {
          double sum = 0;
          for (int h = kv * 3; h < kv * 3 + 3; ++h) sum += gm.dk.get(offset(m.k_strides(), 0, j, h, x));
          const double got = g.dk.get(offset(p.k_strides(), 0, j, kv, x));
          worst = std::max(worst, std::abs(got - sum));
          scale = std::max(scale, std::abs(sum));
        }
    EXPECT_LE(worst, 1e-5 * std::max(1.0, scale)) << k.name;
    EXPECT_LE(dq_worst, 1e-5 * std::max(1.0, scale)) << k.name << ": dQ of a GQA problem is the MHA problem's";
  }
}

TEST(BackwardGpu, EveryBackwardMutantIsKilled) {
  FP_SKIP_WITHOUT_GPU();
  std::vector<std::string> survivors;
  for (const BackwardMutant& m : backward_mutants()) {
    std::string killer;
    for (DType t : {DType::f16, DType::bf16}) {
      for (const Case& c : grid(t)) {
        const AttnInputs in = random_inputs(c.p, c.seed);
        Outcome o;
        try {
          o = judge(m.kernel, c.p, in, backward_inputs(c.p, in, c.seed + 100));
        } catch (const GpuError& e) {
          o.pass = false;
          o.why = e.what();
        }
        if (!o.pass) {
          killer = c.p.id() + ": " + o.why.substr(0, 200);
          break;
        }
      }
      if (!killer.empty()) break;
    }
    std::cout << (killer.empty() ? "SURVIVED " : "killed   ") << m.meta.name << (killer.empty() ? "" : " by " + killer) << "\n";
    if (killer.empty()) survivors.push_back(m.meta.name);
  }
  EXPECT_TRUE(survivors.empty()) << survivors.size() << " backward mutant(s) survived, first: " << survivors.front();
}

}  // namespace
}  // namespace flashprobe::kernels
