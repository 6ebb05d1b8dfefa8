// check(): the tolerance model on simulated kernels (correct ones pass, planted bugs fail), the
// NaN/Inf rules, row sampling and the record it returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/simulated.h"

using namespace flashprobe;
using namespace flashprobe::oracle;

namespace {
AttnProblem typical(DType t) {
  AttnProblem p;
  p.batch = 2; p.hq = 6; p.hkv = 2; p.sq = 37; p.sk = 300; p.d = 80; p.dv = 80;
  p.dtype = p.out_dtype = t;
  p.causal = Causal::bottom_right;
  return p;
}
}  // namespace

TEST(Check, EveryCorrectSimulatedKernelPasses) {
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const AttnProblem p = typical(t);
    const AttnInputs in = random_inputs(p, 1);
    for (const auto& k : simulated_kernels()) {
      if (!k.correct) continue;
      const CheckResult r = check(p, in, run_simulated(k, p, in));
      EXPECT_TRUE(r.pass) << k.name << ": " << r.summary();
      EXPECT_LT(r.o_margin, 1.0);
      EXPECT_GT(r.o_metrics.cosine, 0.9999);
    }
  }
}

TEST(Check, EveryPlantedBugFailsWhereItIsObservable) {
  // Each bug on a problem that exposes it: causal Sq != Sk, GQA, bf16 with a long row, Sk = 3.
  AttnProblem p = typical(DType::bf16);
  p.sq = 40; p.sk = 1000;
  AttnProblem pad = p;
  pad.sk = 3; pad.sq = 3;
  for (const auto& k : simulated_kernels()) {
    if (k.correct) continue;
    AttnProblem f32 = p;  // an f32 output rounded to f16 shows only where the bound is fp32-tight
    f32.dtype = f32.out_dtype = DType::f32;
    const AttnProblem& q = k.name == "pad_pow2_softmax" ? pad : k.name == "f32_out_via_f16" ? f32 : p;
    const AttnInputs in = random_inputs(q, 2);
    const CheckResult r = check(q, in, run_simulated(k, q, in));
    if (k.name == "bf16_truncation") {
      // Truncation moves O by at most one bf16 ulp more than rounding: not always beyond the bound
      // (TOLERANCE.md gives its measured kill rate). Its error must at least exceed the emulation's.
      EXPECT_GT(r.o_metrics.max_abs, r.emulated_metrics.max_abs) << r.summary();
      continue;
    }
    EXPECT_FALSE(r.pass) << k.name << " survived: " << r.summary();
  }
}

TEST(Check, ScaleTwiceInLseIsCaughtOnlyThroughLse) {
  const AttnProblem p = typical(DType::f16);
  const AttnInputs in = random_inputs(p, 3);
  AttnOutputs out = run_simulated(simulated_kernel("scale_twice_lse"), p, in);
  EXPECT_FALSE(check(p, in, out).pass);
  out.lse.clear();  // without LSE the O is correct
  EXPECT_TRUE(check(p, in, out).pass);
}

TEST(Check, ACorruptedElementFails) {
  const AttnProblem p = typical(DType::f16);
  const AttnInputs in = random_inputs(p, 4);
  AttnOutputs out = run_simulated(simulated_kernel("flash_bk64_exp2"), p, in);
  ASSERT_TRUE(check(p, in, out).pass);
  const std::int64_t i = offset(p.o_strides(), 1, 20, 3, 7);
  out.o.set(i, out.o.get(i) + 0.05);
  const CheckResult r = check(p, in, out);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.o_metrics.worst, "b1 row20 h3 x7");
  EXPECT_NE(r.reason.find("exceeds the bound"), std::string::npos) << r.reason;
}

TEST(Check, NanAlwaysFailsAndInfMustMatchInSign) {
  const AttnProblem p = typical(DType::f16);
  const AttnInputs in = random_inputs(p, 5);
  const AttnOutputs good = run_simulated(simulated_kernel("threepass"), p, in);
  AttnOutputs out = good;
  out.o.set(offset(p.o_strides(), 0, 3, 1, 2), NAN);
  CheckResult r = check(p, in, out);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.o_metrics.nan_count, 1);
  EXPECT_FALSE(r.o_metrics.nonfinite_pattern_ok);
  out = good;
  out.o.set(offset(p.o_strides(), 0, 3, 1, 2), INFINITY);
  r = check(p, in, out);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.o_metrics.inf_count, 1);
  out = good;
  out.lse[5] = NAN;
  EXPECT_FALSE(check(p, in, out).pass);
}

TEST(Check, InfInTheReferenceMustBeMatchedWithTheSameSign) {
  // f32 inputs with values beyond fp16's range and an fp16 output: the reference rounded to fp16 is
  // +-Inf, and a kernel must give the same Inf.
  AttnProblem p;
  p.sq = 2; p.sk = 1; p.d = 4; p.dv = 2; p.dtype = DType::f32; p.out_dtype = DType::f16;
  AttnInputs in = random_inputs(p, 6);
  in.v.set(0, 1e6);
  in.v.set(1, -1e6);
  AttnOutputs out{Tensor(DType::f16, p.o_span()), std::vector<float>(2, 0.f)};
  const Reference r = reference(p, in);
  for (int i = 0; i < p.sq; ++i) {
    out.o.set(offset(p.o_strides(), 0, i, 0, 0), INFINITY);
    out.o.set(offset(p.o_strides(), 0, i, 0, 1), -INFINITY);
    out.lse[static_cast<std::size_t>(i)] = static_cast<float>(r.lse[static_cast<std::size_t>(i)]);
  }
  EXPECT_TRUE(check(p, in, out).pass) << check(p, in, out).summary();
  out.o.set(offset(p.o_strides(), 0, 1, 0, 1), INFINITY);
  EXPECT_FALSE(check(p, in, out).pass);
}

TEST(Check, RowsThatSeeNoKeyNeedZeroAndMinusInfinity) {
  AttnProblem p;
  p.sq = 4; p.sk = 0; p.d = 8; p.dv = 8;
  const AttnInputs in = random_inputs(p, 7);
  AttnOutputs out{Tensor(p.out_dtype, p.o_span()), std::vector<float>(4, -INFINITY)};
  for (std::int64_t i = 0; i < out.o.size(); ++i) out.o.set(i, 0.0);
  EXPECT_TRUE(check(p, in, out).pass);
  out.lse[2] = INFINITY;  // FlashAttention's convention for empty rows is not ours
  CheckResult r = check(p, in, out);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.reason.find("sees no key"), std::string::npos) << r.reason;
  out.lse[2] = -INFINITY;
  out.o.set(3, NAN);  // 0/0 in an empty row
  EXPECT_FALSE(check(p, in, out).pass);
}

TEST(Check, RowSamplingChecksFewRowsButScansEveryRowForNan) {
  AttnProblem p = typical(DType::bf16);
  p.sq = 300;
  const AttnInputs in = random_inputs(p, 8);
  AttnOutputs out = run_simulated(simulated_kernel("flash_bk16"), p, in);
  CheckOptions opt;
  opt.max_rows = 10;
  CheckResult r = check(p, in, out, opt);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.rows_checked, 10);
  EXPECT_EQ(r.rows_total, 300);
  const auto rows = rows_to_check(p, in, opt);
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 299);
  int unsampled = 1;
  while (std::find(rows.begin(), rows.end(), unsampled) != rows.end()) ++unsampled;
  out.o.set(offset(p.o_strides(), 0, unsampled, 0, 0), NAN);
  r = check(p, in, out, opt);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.o_metrics.nan_count, 1);
}

// Sampling needs finite inputs: one Inf anywhere in K (here its last element, past the first of the
// scan's chunks of 65,536 elements) checks every row, in each input type.
TEST(Check, AnInfiniteInputTurnsRowSamplingOff) {
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    AttnProblem p = typical(t);
    p.sq = 300;  // K: 2 x 300 x 2 x 80 = 96,000 elements
    AttnInputs in = random_inputs(p, 8);
    CheckOptions opt;
    opt.max_rows = 10;
    EXPECT_EQ(rows_to_check(p, in, opt).size(), 10u) << dtype_name(t);
    in.k.set(in.k.size() - 1, INFINITY);
    EXPECT_TRUE(rows_to_check(p, in, opt).empty()) << dtype_name(t);
  }
}

TEST(Check, RejectsOutputsThatDoNotFit) {
  const AttnProblem p = typical(DType::f16);
  const AttnInputs in = random_inputs(p, 9);
  AttnOutputs out = run_simulated(simulated_kernel("threepass"), p, in);
  AttnOutputs bad = out;
  bad.o.dtype = DType::bf16;
  EXPECT_THROW(check(p, in, bad), UsageError);
  bad = out;
  bad.lse.pop_back();
  EXPECT_THROW(check(p, in, bad), UsageError);
}

TEST(Check, RecordCarriesVerdictMetricsBoundAndMargin) {
  const AttnProblem p = typical(DType::f16);
  const AttnInputs in = random_inputs(p, 10);
  const CheckResult r = check(p, in, run_simulated(simulated_kernel("splitkv4_bk64"), p, in));
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["case_id"], p.id());
  EXPECT_EQ(j["pass"], true);
  for (const char* k : {"max_abs", "max_rel", "nmse", "cosine", "max_ulp", "nan_count", "inf_count", "lse_max_abs"})
    EXPECT_TRUE(j["metrics"].contains(k)) << k;
  EXPECT_DOUBLE_EQ(j["o"]["margin"].get<double>(), r.o_error / r.o_bound);
  EXPECT_TRUE(j["lse"].contains("bound"));
  EXPECT_EQ(r.summary().rfind("PASS " + p.id(), 0), 0u) << r.summary();
}

TEST(Metrics, UlpOfTheOutputType) {
  EXPECT_EQ(ulp(DType::f16, 1.0), std::ldexp(1.0, -10));
  EXPECT_EQ(ulp(DType::bf16, 3.0), std::ldexp(1.0, -6));
  EXPECT_EQ(ulp(DType::f32, 0.0), std::ldexp(1.0, -149));
  EXPECT_EQ(ulp(DType::f16, 1e-7), std::ldexp(1.0, -24));  // subnormal spacing
  EXPECT_EQ(smallest_normal(DType::f16), std::ldexp(1.0, -14));
  EXPECT_EQ(smallest_normal(DType::bf16), std::ldexp(1.0, -126));
  EXPECT_EQ(smallest_normal(DType::f32), std::ldexp(1.0, -126));
}

// ulp() reads the exponent field; the definition is 2^(max(ilogb(x), emin) - mant), emin for zero,
// Inf and NaN. Random bit patterns (every exponent, signs, double subnormals) and the special values.
TEST(Metrics, UlpEqualsItsDefinitionOnEveryKindOfDouble) {
  std::mt19937_64 rng(3);
  std::vector<double> xs{0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, -1e-310, 65504.0, 6.1e-5, 1.0 / 3};
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t u = rng();
    double x;
    std::memcpy(&x, &u, 8);
    xs.push_back(x);
  }
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const int mant = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : 23, emin = t == DType::f16 ? -14 : -126;
    for (double x : xs) {
      const int e = x != 0 && std::isfinite(x) ? std::max(std::ilogb(x), emin) : emin;
      ASSERT_EQ(ulp(t, x), std::ldexp(1.0, e - mant)) << dtype_name(t) << " " << x;
    }
  }
}
