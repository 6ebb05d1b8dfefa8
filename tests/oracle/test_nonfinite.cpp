// Non-finite inputs (docs/attention-semantics.md, "Non-finite inputs"): the reference follows IEEE
// rules per element, the bound comes from the finite contributions of each row, the NaN/Inf pattern
// must match where the reference is non-finite, an element the check cannot bound makes it fail, and
// a NaN input is refused (named by tensor and position) unless the caller allows it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "flashprobe/core/error.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/simulated.h"
#include "naive_reference.h"

using namespace flashprobe;
using namespace flashprobe::oracle;

namespace {
AttnProblem small(DType t) {
  AttnProblem p;
  p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 9; p.sk = 40; p.d = 32; p.dv = 24;
  p.dtype = p.out_dtype = t;
  return p;
}

// The output a kernel would give, with every element where the reference is finite replaced by
// N(0, sigma) garbage (non-finite elements are kept, so the NaN/Inf pattern matches).
AttnOutputs garbage_where_finite(const AttnProblem& p, const AttnOutputs& good, double sigma) {
  AttnOutputs out = good;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0, sigma);
  for (std::int64_t i = 0; i < out.o.size(); ++i)
    if (std::isfinite(out.o.get(i))) out.o.set(i, n(rng));
  out.lse.clear();
  (void)p;
  return out;
}

std::int64_t v_at(const AttnProblem& p, int b, int j, int h, int x) { return offset(p.v_strides(), b, j, h, x); }
std::int64_t k_at(const AttnProblem& p, int b, int j, int h, int x) { return offset(p.k_strides(), b, j, h, x); }
}  // namespace

TEST(NonFinite, AnInfiniteVDoesNotMakeTheBoundVacuous) {
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const AttnProblem p = small(t);
    AttnInputs in = random_inputs(p, 21);
    in.v.set(v_at(p, 0, 7, 1, 3), -INFINITY);  // every row of batch 0, heads 2-3 reads it
    const AttnOutputs good = run_simulated(simulated_kernel("flash_bk16"), p, in);
    const CheckResult ok = check(p, in, good);
    EXPECT_TRUE(ok.pass) << ok.summary();
    EXPECT_TRUE(std::isfinite(ok.o_bound_max)) << ok.summary();
    EXPECT_GT(ok.o_metrics.inf_count, 0);
    const CheckResult bad = check(p, in, garbage_where_finite(p, good, 10.0));
    EXPECT_FALSE(bad.pass) << "garbage passed with an infinite V: " << bad.summary();
  }
}

TEST(NonFinite, MinusInfinityInKMasksOrPoisonsAKeyPerIeee) {
  // k_j = -inf in one coordinate: score -inf where q_x > 0 (the key gets probability 0), +inf where
  // q_x < 0 (inf - inf in the softmax: the row is NaN), NaN where q_x = 0.
  AttnProblem p = small(DType::f16);
  AttnInputs in = random_inputs(p, 22);
  in.k.set(k_at(p, 1, 11, 0, 5), -INFINITY);
  in.q.set(offset(p.q_strides(), 1, 4, 0, 5), 0.0);  // row 4 of head 0: 0 * -inf = NaN
  const test::NaiveResult nv = test::naive_attention(p, in);
  const Reference ref = reference(p, in);
  const Strides qs = p.q_strides();
  int masked = 0, poisoned = 0;
  for (int h = 0; h < p.group(); ++h)
    for (int i = 0; i < p.sq; ++i) {
      const double q = in.q.get(offset(qs, 1, i, h, 5));
      const double o = ref.o[ref.o_index(p, 1, i, h, 0)], lse = ref.lse[ref.lse_index(p, 1, h, i)];
      if (q > 0) {
        ++masked;
        EXPECT_TRUE(std::isfinite(o) && std::isfinite(lse)) << "row " << i << " h" << h;
      } else {
        ++poisoned;
        EXPECT_TRUE(std::isnan(o) && std::isnan(lse)) << "row " << i << " h" << h << " q_x " << q;
      }
    }
  EXPECT_GT(masked, 0);
  EXPECT_GT(poisoned, 1);
  // The engine agrees with the independent loop implementation element by element, NaN for NaN.
  for (std::size_t e = 0; e < ref.o.size(); ++e) {
    const double n = static_cast<double>(nv.o[e]);
    if (std::isnan(n)) EXPECT_TRUE(std::isnan(ref.o[e])) << e;
    else EXPECT_NEAR(ref.o[e], n, 1e-12 * (1 + std::abs(n))) << e;
  }
  const AttnOutputs good = run_simulated(simulated_kernel("flash_bk64_exp2"), p, in);
  EXPECT_TRUE(check(p, in, good).pass) << check(p, in, good).summary();
  EXPECT_FALSE(check(p, in, garbage_where_finite(p, good, 3.0)).pass);
}

TEST(NonFinite, ARowWhoseScoresAreAllMinusInfinitySeesNoKey) {
  AttnProblem p = small(DType::f32);
  p.batch = 1; p.hq = p.hkv = 1; p.sq = 3;
  AttnInputs in = random_inputs(p, 23);
  for (int i = 0; i < p.sq; ++i)
    for (int x = 0; x < p.d; ++x) in.q.set(offset(p.q_strides(), 0, i, 0, x), i == 1 ? 0.5 : in.q.get(offset(p.q_strides(), 0, i, 0, x)));
  for (int j = 0; j < p.sk; ++j) in.k.set(k_at(p, 0, j, 0, 0), -INFINITY);  // row 1 (q > 0 everywhere): all scores -inf
  const Reference ref = reference(p, in);
  EXPECT_EQ(ref.lse[ref.lse_index(p, 0, 0, 1)], -INFINITY);
  for (int x = 0; x < p.dv; ++x) EXPECT_EQ(ref.o[ref.o_index(p, 0, 1, 0, x)], 0.0) << x;
  const test::NaiveResult nv = test::naive_attention(p, in);
  EXPECT_EQ(nv.lse[1], -INFINITY);
}

TEST(NonFinite, AnElementTheEmulationCannotRepresentCannotBeBounded) {
  // f32 inputs whose scores overflow fp32 (1e40) but not double: the reference is finite, the
  // low-precision yardstick is not, so no bound exists; the check must say so and not pass.
  AttnProblem p = small(DType::f32);
  AttnInputs in = random_inputs(p, 24);
  in.q.set(offset(p.q_strides(), 0, 2, 1, 0), 1e20);
  in.k.set(k_at(p, 0, 3, 0, 0), 1e20);
  const Reference ref = reference(p, in);
  AttnOutputs out{Tensor(p.out_dtype, p.o_span()), {}};
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) out.o.set(offset(p.o_strides(), b, i, h, x), ref.o[ref.o_index(p, b, i, h, x)]);
  const std::int64_t e = offset(p.o_strides(), 0, 2, 1, 4);
  out.o.set(e, out.o.get(e) + 100.0);  // garbage at the unboundable row
  const CheckResult r = check(p, in, out);
  EXPECT_FALSE(r.pass) << r.summary();
  EXPECT_GT(r.o_metrics.cannot_bound, 0) << r.summary();
  EXPECT_NE(r.reason.find("cannot bound"), std::string::npos) << r.reason;
  EXPECT_NE(r.summary().find("cannot bound"), std::string::npos) << r.summary();
}

TEST(NonFinite, ANanInputIsRefusedByTensorAndPosition) {
  const AttnProblem p = small(DType::bf16);
  AttnInputs in = random_inputs(p, 25);
  in.v.set(v_at(p, 1, 6, 0, 2), NAN);
  const AttnOutputs out = run_simulated(simulated_kernel("threepass"), p, in);
  try {
    (void)check(p, in, out);
    ADD_FAILURE() << "a NaN in V was not reported";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("V holds NaN at [1, 6, 0, 2]"), std::string::npos) << what;
    EXPECT_NE(what.find("allow_nan_inputs"), std::string::npos) << what;
  }
  // Allowed: NaN propagates per IEEE (column 2 of the rows that read key 6 is NaN) and a correct
  // kernel passes; garbage in the finite elements still fails.
  CheckOptions opt;
  opt.allow_nan_inputs = true;
  const CheckResult r = check(p, in, out, opt);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.o_metrics.nan_count, std::int64_t{p.sq} * p.group());
  EXPECT_FALSE(check(p, in, garbage_where_finite(p, out, 3.0), opt).pass);
}

TEST(NonFinite, NanBeyondAKeyLengthIsNeverRead) {
  AttnProblem p = small(DType::f16);
  p.seqlens_k = {30, 40};
  AttnInputs in = random_inputs(p, 26);
  in.k.set(k_at(p, 0, 35, 1, 0), NAN);  // batch 0 has 30 keys: padding of a cache
  in.v.set(v_at(p, 0, 31, 0, 0), NAN);
  const CheckResult r = check(p, in, run_simulated(simulated_kernel("flash_bk16"), p, in));
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.o_metrics.nan_count, 0);
}
