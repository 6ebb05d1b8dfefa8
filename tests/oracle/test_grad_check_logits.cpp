// check_backward() at large logits (scores of order 1e5: the property harness's `logits` inputs, where
// PyTorch's flash and cuDNN backward failed the dV bias test on an H100 with biases of 3-5 ulps).
#include <gtest/gtest.h>

#include <cmath>

#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/grad_check.h"
#include "flashprobe/oracle/reference.h"
#include "flashprobe/oracle/simulated_backward.h"
#include "../common/backward_inputs.h"
#include "../common/backward_large_logits.h"
#include "flashprobe/proptests/cases.h"

using namespace flashprobe;
using namespace flashprobe::oracle;
using flashprobe::oracle::testing::backward_inputs;

namespace {

// The harness's case: batch 1, sq 16, d 128, no mask, inputs drawn as `logits` (proptests/cases.h).
proptests::Case logits_case(DType t, int heads, int sk, std::uint64_t seed) {
  proptests::Case c;
  c.problem.batch = 1;
  c.problem.hq = c.problem.hkv = heads;
  c.problem.sq = 16;
  c.problem.sk = sk;
  c.problem.d = c.problem.dv = 128;
  c.problem.dtype = c.problem.out_dtype = t;
  c.problem.causal = Causal::none;
  c.seed = seed;
  c.inputs = proptests::InputKind::large_logits;
  return c;
}

}  // namespace

// At logits of order 1e5 the fp32 scores are off by about 2^-23 * 1e5 ~ 1e-2 in absolute terms, so a
// correct kernel's P (near one-hot there) is off by up to a percent, one-signed over many rows: tens
// of ulps of dV. The simulated correct kernels show -73 to +1 ulps here; without the score term of
// the bias limit (grad_score_bias_ulp) 32 of these 60 kernel runs failed the dV bias test.
TEST(GradCheckLogits, CorrectKernelsPassTheBiasTestAtLargeLogits) {
  int tested = 0;
  for (const auto& [t, heads, sk] : {std::tuple{DType::f16, 1, 5}, {DType::f16, 1, 17}, {DType::bf16, 2, 3}})
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      const proptests::Case c = logits_case(t, heads, sk, seed);
      const AttnInputs in = c.make_inputs();
      const BackwardInputs bw = backward_inputs(c.problem, in, seed + 100);
      const BackwardOracle o = backward_oracle(c.problem, in, bw);
      for (const auto& k : simulated_backward_kernels()) {
        if (!k.correct) continue;
        const BackwardCheckResult r = check_backward(c.problem, in, bw, run_simulated_backward(k, c.problem, in, bw), o);
        EXPECT_TRUE(r.dv.pass) << k.name << " " << c.id() << ": " << r.dv.reason;
        if (!r.dv.bias_tested) continue;
        ++tested;
        EXPECT_GT(r.dv.bias_score_ulp, 10.0) << c.id();
      }
    }
  EXPECT_GE(tested, 40);  // the bias test applied (sk = 3 has 384 dV elements, fewer with |ref| >= rms/2)
}

// At ordinary logits the score term is a few hundredths of an ulp: the truncation it must still
// catch moves the mean by half an ulp (GradCheck.EachPlantedBugFailsWhereItMatters).
TEST(GradCheckLogits, ScoreBiasAllowanceIsNegligibleAtOrdinaryLogits) {
  AttnProblem p;
  p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 64; p.sk = 112; p.d = 64; p.dv = 64;
  for (DType t : {DType::f16, DType::bf16}) {
    p.dtype = p.out_dtype = t;
    InputDist dist;
    dist.magnitude = 3;  // the calibration's largest: logits up to about 70
    const AttnInputs in = random_inputs(p, 21, dist);
    const BackwardInputs bw = backward_inputs(p, in, 22);
    const BackwardCheckResult r =
        check_backward(p, in, bw, run_simulated_backward(simulated_backward_kernel("bwd_truncate"), p, in, bw));
    for (Grad g : {Grad::dq, Grad::dk, Grad::dv}) {
      EXPECT_TRUE(r.verdict(g).bias_tested) << grad_name(g);
      EXPECT_LT(r.verdict(g).bias_score_ulp, 0.05) << grad_name(g);
    }
    EXPECT_FALSE(r.pass) << r.summary();
  }
}

// There the bounds of dQ and dK (order 1e4 for gradients the kernels give as 1e-4 around an exact
// ~1e-305) exceed every plausible dQ and dK: δs = 2^-23 s_max ~ 0.1, and the model's term
// u (1 + s_max) scale max|K| e_D is a tenth of what a gradient of that size could be. Such a bound
// checks nothing, so the verdict is NOT BOUNDED: not a pass, not a failure of the kernel. dV stays
// bounded and judged. (Before grad_plausible these cases passed silently, margin 0.00.)
TEST(GradCheckLogits, DqAndDkAtLargeLogitsAreNotBoundedAndDoNotPass) {
  for (const auto& [t, heads, sk] : {std::tuple{DType::f16, 1, 5}, {DType::bf16, 2, 3}}) {
    const proptests::Case c = logits_case(t, heads, sk, 0);
    const AttnInputs in = c.make_inputs();
    const BackwardInputs bw = backward_inputs(c.problem, in, 100);
    const BackwardCheckResult r =
        check_backward(c.problem, in, bw, run_simulated_backward(simulated_backward_kernel("fa2_b64"), c.problem, in, bw));
    EXPECT_FALSE(r.pass) << r.summary();
    EXPECT_FALSE(r.failed) << r.summary();
    EXPECT_FALSE(r.bounded);
    EXPECT_FALSE(r.dq.bounded || r.dq.pass);
    EXPECT_FALSE(r.dk.bounded || r.dk.pass);
    EXPECT_TRUE(r.dv.bounded && r.dv.pass) << r.dv.reason;
    EXPECT_GT(r.dq.bound, r.dq.plausible);
    EXPECT_NE(r.summary().find("backward NOT BOUNDED"), std::string::npos) << r.summary();
    EXPECT_NE(r.reason.find("cannot bound dQ"), std::string::npos) << r.reason;
    EXPECT_EQ(r.to_json()["bounded"], false);
    EXPECT_EQ(r.to_json()["dk"]["bounded"], false);
  }
}

// A gradient that is both over its bound and unbounded elsewhere is a failure, named first.
TEST(GradCheckLogits, AFailureStaysAFailureBesideAnUnboundedGradient) {
  const proptests::Case c = logits_case(DType::f16, 1, 5, 0);
  const AttnInputs in = c.make_inputs();
  const BackwardInputs bw = backward_inputs(c.problem, in, 100);
  KernelGradients g = run_simulated_backward(simulated_backward_kernel("fa2_b64"), c.problem, in, bw);
  g.dv.set(7, g.dv.get(7) + 20.0);
  const BackwardCheckResult r = check_backward(c.problem, in, bw, g);
  EXPECT_TRUE(r.failed && !r.pass && !r.bounded) << r.summary();
  EXPECT_EQ(r.reason.rfind("dV max_abs", 0), 0u) << r.reason;
  EXPECT_NE(r.summary().find("backward FAIL"), std::string::npos);
}

// On ordinary inputs and the harness's large and rising ones (scores up to about 1e4), bounds stay far
// below the plausible gradients (the calibration's largest ratio: 0.025): nothing there turns NOT BOUNDED.
TEST(GradCheckLogits, OrdinaryAndLargeInputsStayBounded) {
  for (auto kind : {proptests::InputKind::normal, proptests::InputKind::large_magnitude, proptests::InputKind::rising_keys})
    for (DType t : {DType::f16, DType::bf16, DType::f32}) {
      proptests::Case c = logits_case(t, 2, 40, 3);
      c.inputs = kind;
      const AttnInputs in = c.make_inputs();
      const BackwardInputs bw = backward_inputs(c.problem, in, 101);
      const BackwardCheckResult r = check_backward(c.problem, in, bw,
                                                   run_simulated_backward(simulated_backward_kernel("fa2_b64"), c.problem, in, bw));
      EXPECT_TRUE(r.pass) << r.summary();
      for (Grad g : {Grad::dq, Grad::dk, Grad::dv})  // measured: at most 0.063 (f32, rising keys, dK)
        EXPECT_LT(r.verdict(g).bound, 0.25 * r.verdict(g).plausible) << c.id() << " " << grad_name(g);
    }
}

// The problem test_backward_gpu gives every backward kernel on the GPU (FiniteWhereTheOracleIsWithLargeLogits,
// logits in the hundreds) must stay bounded: were it NOT BOUNDED, that GPU test would fail every kernel
// with no fault of theirs. Every correct simulated kernel passes it, each gradient's bound far below
// the plausible one.
TEST(GradCheckLogits, TheGpuLargeLogitProblemIsBounded) {
  for (DType t : {DType::f16, DType::bf16}) {
    const AttnProblem p = flashprobe::testing::large_logit_backward_problem(t);
    const AttnInputs in = flashprobe::testing::large_logit_backward_inputs(p);
    const BackwardInputs bw = backward_inputs(p, in, flashprobe::testing::kLargeLogitGradsSeed);
    const BackwardOracle o = backward_oracle(p, in, bw);
    int kernels = 0;
    for (const auto& k : simulated_backward_kernels()) {
      if (!k.correct) continue;
      ++kernels;
      const BackwardCheckResult r = check_backward(p, in, bw, run_simulated_backward(k, p, in, bw), o);
      EXPECT_TRUE(r.pass && r.bounded) << k.name << " " << p.id() << ": " << r.summary();
      for (Grad g : {Grad::dq, Grad::dk, Grad::dv})
        EXPECT_LT(r.verdict(g).bound, 0.25 * r.verdict(g).plausible) << k.name << " " << p.id() << " " << grad_name(g);
    }
    EXPECT_GE(kernels, 2);
  }
}

// At logits of order 1e5 the exact dQ and dK underflow (~1e-305, below every 16-bit type's smallest
// normal) while the kernels give ~1e-4: counted in ulps of the reference (the subnormal step) their
// mean bias came out ~1e34 ulp. Such elements have no ulp to count in and are left out of the bias
// mean: every bias statistic stays finite and of the size of a gradient's rounding error.
TEST(GradCheckLogits, UnderflowingExactGradientsAreLeftOutOfTheBias) {
  int underflowing = 0;
  for (const auto& [t, heads, sk] : {std::tuple{DType::f16, 1, 5}, {DType::bf16, 2, 3}})
    for (std::uint64_t seed = 0; seed < 2; ++seed) {
      const proptests::Case c = logits_case(t, heads, sk, seed);
      const AttnInputs in = c.make_inputs();
      const BackwardInputs bw = backward_inputs(c.problem, in, seed + 100);
      const BackwardOracle o = backward_oracle(c.problem, in, bw);
      const double min_normal = smallest_normal(t);
      for (double v : o.ref.dk) underflowing += v != 0 && std::abs(v) < min_normal;
      const BackwardCheckResult r =
          check_backward(c.problem, in, bw, run_simulated_backward(simulated_backward_kernel("fa2_b64"), c.problem, in, bw), o);
      for (Grad g : {Grad::dq, Grad::dk, Grad::dv}) {
        const GradVerdict& v = r.verdict(g);
        EXPECT_LT(std::abs(v.got.bias_ulp), 1e3) << c.id() << " " << grad_name(g) << " over " << v.got.bias_count;
        EXPECT_LT(v.got.bias_rel_ulp, 2 / dtype_eps(t)) << c.id() << " " << grad_name(g);  // normal: |ref| / ulp(ref) < 2^(mantissa+1)
        EXPECT_LT(std::abs(v.emulated.bias_ulp), 1e3) << c.id() << " " << grad_name(g);
      }
      EXPECT_FALSE(r.dk.bounded || r.dk.pass) << r.summary();  // the verdicts stay as they were
      EXPECT_TRUE(r.dv.pass) << r.dv.reason;
    }
  EXPECT_GT(underflowing, 0);  // the case still holds exact gradients below the smallest normal
}
