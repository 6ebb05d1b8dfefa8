// check_backward(): correct simulated backward kernels pass, each planted bug fails on a case where
// it matters, and the NaN/Inf and usage rules hold.
#include <gtest/gtest.h>

#include <cmath>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/grad_check.h"
#include "flashprobe/oracle/reference.h"
#include "flashprobe/oracle/simulated_backward.h"
#include "../common/backward_inputs.h"

using namespace flashprobe;
using namespace flashprobe::oracle;
using flashprobe::oracle::testing::backward_inputs;

namespace {

AttnProblem problem(DType t, Causal c = Causal::bottom_right) {
  AttnProblem p;
  p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 64; p.sk = 112; p.d = 64; p.dv = 64;
  p.dtype = p.out_dtype = t;
  p.causal = c;
  return p;
}

// Exact gradients rounded to the input type, written at the problem's strides.
KernelGradients rounded_reference(const AttnProblem& p, const Gradients& g) {
  KernelGradients k{Tensor(p.dtype, p.q_span()), Tensor(p.dtype, p.k_span()), Tensor(p.dtype, p.v_span())};
  for (int b = 0; b < p.batch; ++b) {
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.d; ++x) k.dq.set(offset(p.q_strides(), b, i, h, x), g.dq[Gradients::dq_index(p, b, i, h, x)]);
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h) {
        for (int x = 0; x < p.d; ++x) k.dk.set(offset(p.k_strides(), b, j, h, x), g.dk[Gradients::dk_index(p, b, j, h, x)]);
        for (int x = 0; x < p.dv; ++x) k.dv.set(offset(p.v_strides(), b, j, h, x), g.dv[Gradients::dv_index(p, b, j, h, x)]);
      }
  }
  return k;
}

}  // namespace

TEST(GradCheck, CorrectSimulatedKernelsPass) {
  std::uint64_t seed = 1;
  for (DType t : {DType::f16, DType::bf16, DType::f32})
    for (int variant = 0; variant < 3; ++variant) {
      AttnProblem p = problem(t, variant == 1 ? Causal::top_left : Causal::bottom_right);
      if (variant == 1) { p.softcap = 5; p.window_left = 40; }
      if (variant == 2) { p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625}; p.seqlens_k = {80, 112}; p.with_layout(TensorLayout::bhsd); }
      const AttnInputs in = random_inputs(p, seed++);
      const BackwardInputs bw = backward_inputs(p, in, seed++);
      const BackwardOracle o = backward_oracle(p, in, bw);
      for (const auto& k : simulated_backward_kernels()) {
        if (!k.correct) continue;
        const BackwardCheckResult r = check_backward(p, in, bw, run_simulated_backward(k, p, in, bw), o);
        EXPECT_TRUE(r.pass) << k.name << ": " << r.summary();
      }
    }
}

TEST(GradCheck, EachPlantedBugFailsWhereItMatters) {
  for (const auto& k : simulated_backward_kernels()) {
    if (k.correct) continue;
    for (DType t : {DType::f16, DType::bf16}) {
      AttnProblem p = problem(t);
      if (k.cfg.no_softcap_grad) { p.softcap = 2; p.scale = 0.5; }
      const AttnInputs in = random_inputs(p, 5);
      const BackwardInputs bw = backward_inputs(p, in, 6);
      const BackwardCheckResult r = check_backward(p, in, bw, run_simulated_backward(k, p, in, bw));
      EXPECT_FALSE(r.pass) << k.name << ": " << r.summary();
    }
  }
}

TEST(GradCheck, RoundedExactGradientsAndTheEmulationItselfPass) {
  const AttnProblem p = problem(DType::bf16);
  const AttnInputs in = random_inputs(p, 7);
  const BackwardInputs bw = backward_inputs(p, in, 8);
  const BackwardOracle o = backward_oracle(p, in, bw);
  const BackwardCheckResult r = check_backward(p, in, bw, rounded_reference(p, o.ref), o);
  EXPECT_TRUE(r.pass) << r.summary();
  const BackwardCheckResult e = check_backward(p, in, bw, rounded_reference(p, o.emulated), o);
  EXPECT_TRUE(e.pass) << e.summary();
  for (Grad g : {Grad::dq, Grad::dk, Grad::dv}) EXPECT_LE(e.verdict(g).margin, 0.5) << grad_name(g);
}

TEST(GradCheck, OneWrongElementFailsAndIsLocated) {
  const AttnProblem p = problem(DType::f16);
  const AttnInputs in = random_inputs(p, 9);
  const BackwardInputs bw = backward_inputs(p, in, 10);
  const BackwardOracle o = backward_oracle(p, in, bw);
  KernelGradients k = rounded_reference(p, o.ref);
  const std::int64_t at = offset(p.k_strides(), 1, 17, 1, 3);
  k.dk.set(at, k.dk.get(at) + 0.05 * std::max(1.0, std::abs(k.dk.get(at))));
  const BackwardCheckResult r = check_backward(p, in, bw, k, o);
  EXPECT_FALSE(r.pass);
  EXPECT_TRUE(r.dq.pass && r.dv.pass && !r.dk.pass) << r.summary();
  EXPECT_NE(r.dk.reason.find("b1 key17 h1 x3"), std::string::npos) << r.dk.reason;
}

TEST(GradCheck, NanInAGradientOrAnInputFails) {
  const AttnProblem p = problem(DType::bf16);
  const AttnInputs in = random_inputs(p, 11);
  BackwardInputs bw = backward_inputs(p, in, 12);
  const BackwardOracle o = backward_oracle(p, in, bw);
  KernelGradients k = rounded_reference(p, o.ref);
  k.dv.set(5, NAN);
  const BackwardCheckResult r = check_backward(p, in, bw, k, o);
  EXPECT_FALSE(r.dv.pass);
  EXPECT_NE(r.reason.find("NaN/Inf"), std::string::npos) << r.reason;
  bw.dout.set(0, INFINITY);
  const BackwardCheckResult r2 = check_backward(p, in, bw, rounded_reference(p, o.ref));
  EXPECT_FALSE(r2.pass);
  EXPECT_NE(r2.reason.find("cannot be bounded"), std::string::npos) << r2.reason;
}

TEST(GradCheck, AnLseThatCannotBoundTheGradientsFails) {
  const AttnProblem p = problem(DType::f16, Causal::none);
  const AttnInputs in = random_inputs(p, 13);
  BackwardInputs bw = backward_inputs(p, in, 14);
  const KernelGradients k = rounded_reference(p, reference_backward(p, in, bw.dout));
  bw.lse[3] = -INFINITY;  // a row that sees keys, given the LSE of an empty row
  const BackwardCheckResult r = check_backward(p, in, bw, k);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.reason.find("cannot bound"), std::string::npos) << r.reason;
}

TEST(GradCheck, OnlyTheGivenGradientsAreCheckedAndNoneIsAUsageError) {
  const AttnProblem p = problem(DType::f16);
  const AttnInputs in = random_inputs(p, 15);
  const BackwardInputs bw = backward_inputs(p, in, 16);
  KernelGradients k = rounded_reference(p, reference_backward(p, in, bw.dout));
  k.dq = {};
  k.dk = {};
  const BackwardCheckResult r = check_backward(p, in, bw, k);
  EXPECT_TRUE(r.pass && !r.dq.checked && !r.dk.checked && r.dv.checked);
  EXPECT_TRUE(r.to_json()["dq"].is_null());
  EXPECT_THROW(check_backward(p, in, bw, KernelGradients{}), UsageError);
  KernelGradients wrong{Tensor(DType::f32, p.q_span()), {}, {}};
  EXPECT_THROW(check_backward(p, in, bw, wrong), UsageError);
}

TEST(GradCheck, BiasTestNeedsEnoughTermsPerElement) {
  // One key per row: dQ sums a single term (and dS = 0 exactly); no bias test for dQ there.
  AttnProblem p = problem(DType::bf16, Causal::none);
  p.sk = 1;
  const AttnInputs in = random_inputs(p, 17);
  const BackwardInputs bw = backward_inputs(p, in, 18);
  const BackwardCheckResult r =
      check_backward(p, in, bw, run_simulated_backward(simulated_backward_kernel("fa2_b64"), p, in, bw));
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_FALSE(r.dq.bias_tested);
  EXPECT_DOUBLE_EQ(r.dq.mean_terms, 1.0);
}
