// Properties of attention that the double oracle must satisfy exactly (to ~1e-12), one invariant each.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "compare_util.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/reference.h"
#include "problem_gen.h"

using namespace flashprobe;
using namespace flashprobe::oracle;
using flashprobe::test::agree;

namespace {
constexpr double kTol = 1e-12;

// f32 problems whose inputs hold bf16 values: sums of two of them are exact in f32, so transformed
// inputs (V1 + 2 V2, K + c) are stored without rounding.
AttnProblem f32_problem(test::GenLimits lim) {
  lim.strides = false;
  AttnProblem p = *test::gen_problem(lim);
  p.dtype = p.out_dtype = DType::f32;
  return p;
}
Tensor bf16_valued(std::int64_t n, std::uint64_t seed) {
  AttnProblem one;
  one.sq = static_cast<int>(std::max<std::int64_t>(n, 1));
  one.d = one.dv = 1;
  one.dtype = DType::bf16;
  const AttnInputs r = random_inputs(one, seed);
  Tensor t(DType::f32, n);
  for (std::int64_t i = 0; i < n; ++i) t.set(i, r.q.get(i));
  return t;
}
AttnInputs bf16_valued_inputs(const AttnProblem& p, std::uint64_t seed) {
  return {bf16_valued(p.q_span(), seed), bf16_valued(p.k_span(), seed + 1), bf16_valued(p.v_span(), seed + 2)};
}
}  // namespace

RC_GTEST_PROP(OracleProperty, KeyValuePermutationInvarianceWithoutMask, ()) {
  AttnProblem p = f32_problem({.masks = false, .extras = false});
  if (*rc::gen::arbitrary<bool>()) p.softcap = 4;  // soft-cap acts per score: still invariant
  const AttnInputs in = random_inputs(p, *rc::gen::arbitrary<std::uint64_t>());
  std::vector<int> perm(static_cast<std::size_t>(p.sk));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(*rc::gen::arbitrary<unsigned>()));
  AttnInputs q = in;
  const Strides ks = p.k_strides(), vs = p.v_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h) {
        for (int x = 0; x < p.d; ++x) q.k.set(offset(ks, b, j, h, x), in.k.get(offset(ks, b, perm[j], h, x)));
        for (int x = 0; x < p.dv; ++x) q.v.set(offset(vs, b, j, h, x), in.v.get(offset(vs, b, perm[j], h, x)));
      }
  const Reference a = reference(p, in), c = reference(p, q);
  RC_ASSERT(agree(c.o, a.o, kTol, "O") == "");
  RC_ASSERT(agree(c.lse, a.lse, kTol, "LSE") == "");
}

RC_GTEST_PROP(OracleProperty, LinearInV, ()) {
  const AttnProblem p = f32_problem({});
  const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
  AttnInputs in1 = bf16_valued_inputs(p, seed), in2 = in1, in3 = in1;
  in2.v = bf16_valued(p.v_span(), seed + 7);
  for (std::int64_t i = 0; i < in3.v.size(); ++i) {
    const double v = in1.v.get(i) + 2 * in2.v.get(i);
    RC_PRE(round_to(DType::f32, v) == v);
    in3.v.set(i, v);
  }
  const Reference r1 = reference(p, in1), r2 = reference(p, in2), r3 = reference(p, in3);
  std::vector<double> lin(r1.o.size());
  for (std::size_t i = 0; i < lin.size(); ++i) lin[i] = r1.o[i] + 2 * r2.o[i];
  RC_ASSERT(agree(r3.o, lin, 1e-11, "O") == "");
  RC_ASSERT(r3.lse == r1.lse);  // V does not enter the LSE
}

RC_GTEST_PROP(OracleProperty, KeyShiftLeavesOAndShiftsLseExactly, ()) {
  AttnProblem p = f32_problem({});
  p.softcap = 0;  // the cap is not shift-invariant
  const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
  const AttnInputs in = bf16_valued_inputs(p, seed);
  const Tensor c = bf16_valued(p.d, seed + 9);
  AttnInputs sh = in;
  const Strides ks = p.k_strides(), qs = p.q_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h)
        for (int x = 0; x < p.d; ++x) {
          const double v = in.k.get(offset(ks, b, j, h, x)) + c.get(x);
          RC_PRE(round_to(DType::f32, v) == v);
          sh.k.set(offset(ks, b, j, h, x), v);
        }
  const Reference a = reference(p, in), s = reference(p, sh);
  RC_ASSERT(agree(s.o, a.o, 1e-11, "O") == "");
  std::vector<double> shifted = a.lse;
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.hq; ++h)
      for (int i = 0; i < p.sq; ++i) {
        double qc = 0;  // every score of row i moves by scale * q_i . c
        for (int x = 0; x < p.d; ++x) qc += in.q.get(offset(qs, b, i, h, x)) * c.get(x);
        shifted[a.lse_index(p, b, h, i)] += p.effective_scale() * qc;
      }
  RC_ASSERT(agree(s.lse, shifted, 1e-11, "LSE") == "");
}

RC_GTEST_PROP(OracleProperty, GqaEqualsMhaWithRepeatedKvHeads, ()) {
  AttnProblem p = *test::gen_problem({.strides = false});
  const AttnInputs in = random_inputs(p, *rc::gen::arbitrary<std::uint64_t>());
  AttnProblem m = p;
  m.hkv = p.hq;
  AttnInputs rep{in.q, Tensor(p.dtype, m.k_span()), Tensor(p.dtype, m.v_span())};
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hq; ++h) {
        for (int x = 0; x < p.d; ++x)
          rep.k.set(offset(m.k_strides(), b, j, h, x), in.k.get(offset(p.k_strides(), b, j, p.kv_head(h), x)));
        for (int x = 0; x < p.dv; ++x)
          rep.v.set(offset(m.v_strides(), b, j, h, x), in.v.get(offset(p.v_strides(), b, j, p.kv_head(h), x)));
      }
  const Reference g = reference(p, in), r = reference(m, rep);
  RC_ASSERT(g.o == r.o);
  RC_ASSERT(g.lse == r.lse);
}

RC_GTEST_PROP(OracleProperty, BottomRightEqualsTopLeftWhenSqEqualsSk, ()) {
  AttnProblem p = *test::gen_problem();
  p.sk = p.sq;
  p.seqlens_k.clear();
  p.kv_offset = 0;
  p.k = p.v = Strides{};
  p.causal = Causal::bottom_right;
  AttnProblem t = p;
  t.causal = Causal::top_left;
  const AttnInputs in = random_inputs(p, *rc::gen::arbitrary<std::uint64_t>());
  const Reference a = reference(p, in), b = reference(t, in);
  RC_ASSERT(a.o == b.o);
  RC_ASSERT(a.lse == b.lse);
}

RC_GTEST_PROP(OracleProperty, KvCacheDecodeEqualsTheLastRowsOfPrefill, ()) {
  // Prefill of N tokens (causal, Sq = Sk = N) vs the same tokens with the first N - n already in the
  // KV cache and n new queries: the new queries' outputs are the prefill's last n rows.
  AttnProblem full = *test::gen_problem({.strides = false});
  full.sk = full.sq = std::max(full.sq, 1);
  full.seqlens_k.clear();
  full.kv_offset = 0;
  full.causal = Causal::bottom_right;
  const int n = *rc::gen::inRange(1, full.sq + 1);
  AttnProblem dec = full;
  dec.sq = n;
  dec.kv_offset = full.sk - n;
  const AttnInputs in = random_inputs(full, *rc::gen::arbitrary<std::uint64_t>());
  AttnInputs din{Tensor(full.dtype, dec.q_span()), in.k, in.v};
  std::vector<int> rows;
  for (int i = 0; i < n; ++i) rows.push_back(full.sq - n + i);
  for (int b = 0; b < full.batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int h = 0; h < full.hq; ++h)
        for (int x = 0; x < full.d; ++x)
          din.q.set(offset(dec.q_strides(), b, i, h, x), in.q.get(offset(full.q_strides(), b, rows[i], h, x)));
  const Reference d = reference(dec, din), f = reference_rows(full, in, rows);
  RC_ASSERT(agree(d.o, f.o, kTol, "O") == "");
  RC_ASSERT(agree(d.lse, f.lse, kTol, "LSE") == "");
}

RC_GTEST_PROP(OracleProperty, RowSamplingEqualsTheFullComputation, ()) {
  const AttnProblem p = *test::gen_problem();
  const AttnInputs in = random_inputs(p, *rc::gen::arbitrary<std::uint64_t>());
  const auto rows = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, p.sq));
  const Reference full = reference(p, in), part = reference_rows(p, in, rows);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < p.hq; ++h) {
        const double a = part.lse[part.lse_index(p, b, h, static_cast<int>(r))];
        const double e = full.lse[full.lse_index(p, b, h, rows[r])];
        RC_ASSERT((a == e || std::abs(a - e) <= kTol * std::max(1.0, std::abs(e))));
        for (int x = 0; x < p.dv; ++x) {
          const double o = part.o[part.o_index(p, b, static_cast<int>(r), h, x)];
          const double of = full.o[full.o_index(p, b, rows[r], h, x)];
          RC_ASSERT(std::abs(o - of) <= kTol * std::max(1.0, std::abs(of)));
        }
      }
}

TEST(OracleProperty, RowSamplingCostIsProportionalToRows) {
  // Not a timing test: a row list of size 1 must not touch other rows (their Q may be garbage).
  AttnProblem p;
  p.sq = 1000; p.sk = 50; p.d = 16; p.dv = 16; p.dtype = DType::f32;
  AttnInputs in = random_inputs(p, 1);
  for (int i = 0; i < p.sq; ++i)
    if (i != 123)
      for (int x = 0; x < p.d; ++x) in.q.set(offset(p.q_strides(), 0, i, 0, x), NAN);
  const Reference r = reference_rows(p, in, {123});
  for (double v : r.o) EXPECT_TRUE(std::isfinite(v));
}
