// The gradient oracle (backward.h) against central differences in long double of the independent
// naive forward (naive_reference.cpp), on every problem feature; the emulated FA2 backward against
// the exact one.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "../common/gqa_as_mha.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/backward.h"
#include "flashprobe/oracle/reference.h"
#include "naive_reference.h"
#include "problem_gen.h"

using namespace flashprobe;
using namespace flashprobe::oracle;

namespace {

// L = sum(dO ∘ O) with the naive long-double forward.
long double naive_loss(const AttnProblem& p, const test::NaiveInputs& in, const Tensor& dout) {
  const test::NaiveResult r = test::naive_attention(p, in);
  const Strides os = p.o_strides();
  long double l = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x)
          l += static_cast<long double>(dout.get(offset(os, b, i, h, x))) *
               r.o[((static_cast<std::size_t>(b) * p.sq + i) * p.hq + h) * p.dv + x];
  return l;
}

// Every gradient element against (L(x + h) - L(x - h)) / 2h; returns "" or the first disagreement.
std::string compare_with_differences(const AttnProblem& p, std::uint64_t seed) {
  const AttnInputs in = random_inputs(p, seed);
  const Tensor dout = random_normal(p.out_dtype, p.o_span(), seed + 1000);
  const Gradients g = reference_backward(p, in, dout);
  test::NaiveInputs x = test::to_long_double(in);
  constexpr long double h = 1e-5L;
  double gmax = 0;
  for (const auto* v : {&g.dq, &g.dk, &g.dv})
    for (double e : *v) gmax = std::max(gmax, std::abs(e));
  const double tol = 1e-8 * std::max(1.0, gmax);
  std::string err;
  auto sweep = [&](std::vector<long double>& t, const Strides& st, int S, int H, int D, const std::vector<double>& grad,
                   const char* name, const std::function<std::size_t(int, int, int, int)>& idx) {
    for (int b = 0; b < p.batch && err.empty(); ++b)
      for (int s = 0; s < S && err.empty(); ++s)
        for (int hh = 0; hh < H && err.empty(); ++hh)
          for (int c = 0; c < D && err.empty(); ++c) {
            long double& e = t[static_cast<std::size_t>(offset(st, b, s, hh, c))];
            const long double keep = e;
            e = keep + h;
            const long double up = naive_loss(p, x, dout);
            e = keep - h;
            const long double down = naive_loss(p, x, dout);
            e = keep;
            const double fd = static_cast<double>((up - down) / (2 * h));
            const double an = grad[idx(b, s, hh, c)];
            if (!(std::abs(fd - an) <= tol))
              err = std::string(name) + " b" + std::to_string(b) + " s" + std::to_string(s) + " h" + std::to_string(hh) +
                    " x" + std::to_string(c) + ": oracle " + std::to_string(an) + " finite difference " +
                    std::to_string(fd) + " (" + p.id() + ")";
          }
  };
  sweep(x.q, p.q_strides(), p.sq, p.hq, p.d, g.dq, "dQ",
        [&](int b, int s, int hh, int c) { return Gradients::dq_index(p, b, s, hh, c); });
  sweep(x.k, p.k_strides(), p.sk, p.hkv, p.d, g.dk, "dK",
        [&](int b, int s, int hh, int c) { return Gradients::dk_index(p, b, s, hh, c); });
  sweep(x.v, p.v_strides(), p.sk, p.hkv, p.dv, g.dv, "dV",
        [&](int b, int s, int hh, int c) { return Gradients::dv_index(p, b, s, hh, c); });
  return err;
}

AttnProblem small(Causal c, int sq, int sk, DType t = DType::f32) {
  AttnProblem p;
  p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = sq; p.sk = sk; p.d = 5; p.dv = 3;
  p.dtype = p.out_dtype = t;
  p.causal = c;
  return p;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(Backward, MatchesFiniteDifferencesOnEveryFeature) {
  std::uint64_t seed = 1;
  for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left})
    for (int variant = 0; variant < 9; ++variant) {
      AttnProblem p = small(c, 4, 6, variant % 3 == 0 ? DType::f32 : variant % 3 == 1 ? DType::f16 : DType::bf16);
      switch (variant) {
        case 1: p.window_left = 1; p.window_right = 2; break;       // windows
        case 2: p.hq = 3; p.hkv = 1; break;                          // MQA
        case 3: p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625}; break;  // ALiBi
        case 4: p.softcap = 1.5; p.scale = 1.0; break;               // soft-cap, its derivative far from 1
        case 5: p.seqlens_k = {0, 5}; break;                         // an empty batch, a short one
        case 6: p.with_layout(TensorLayout::bhsd); break;
        case 7:
          p.q = test::padded_strides(p.sq, p.hq, p.d, 3);
          p.k = test::padded_strides(p.sk, p.hkv, p.d, 1);
          p.v = test::padded_strides(p.sk, p.hkv, p.dv, 2);
          p.o = test::padded_strides(p.sq, p.hq, p.dv, 5);
          break;
        case 8: p.sq = 7; p.sk = 3; p.window_left = 0; break;  // rows that see no key
        default: break;
      }
      EXPECT_EQ(compare_with_differences(p, seed++), "");
    }
}

TEST(Backward, MatchesFiniteDifferencesEverythingAtOnce) {
  AttnProblem p = small(Causal::bottom_right, 5, 8, DType::bf16);
  p.hq = 6; p.hkv = 2; p.window_left = 3; p.softcap = 2; p.scale = 0.8;
  p.alibi_slopes = {0.3, 0.2, 0.1, 0.05, 0.02, 0.01};
  p.seqlens_k = {8, 6};
  p.with_layout(TensorLayout::bhsd);
  EXPECT_EQ(compare_with_differences(p, 77), "");
}

TEST(Backward, RowsWithoutKeysAndUnseenKeysGetExactZeros) {
  AttnProblem p = small(Causal::bottom_right, 6, 4);  // rows 0 and 1 see no key
  p.seqlens_k = {4, 2};                               // batch 1: rows 0..3 see none, keys 2, 3 do not exist
  const AttnInputs in = random_inputs(p, 3);
  const Tensor dout = random_normal(p.out_dtype, p.o_span(), 4);
  for (const Gradients& g : {reference_backward(p, in, dout), emulate_backward(p, in, {dout, {}, {}})}) {
    for (int h = 0; h < p.hq; ++h)
      for (int x = 0; x < p.d; ++x) {
        EXPECT_EQ(g.dq[Gradients::dq_index(p, 0, 1, h, x)], 0.0);
        EXPECT_EQ(g.dq[Gradients::dq_index(p, 1, 3, h, x)], 0.0);
        EXPECT_NE(g.dq[Gradients::dq_index(p, 1, 5, h, x)], 0.0);  // row 4 sees one key: dS = 0 exactly
      }
    for (int h = 0; h < p.hkv; ++h) {
      for (int x = 0; x < p.d; ++x) EXPECT_EQ(g.dk[Gradients::dk_index(p, 1, 2, h, x)], 0.0);
      for (int x = 0; x < p.dv; ++x) EXPECT_EQ(g.dv[Gradients::dv_index(p, 1, 3, h, x)], 0.0);
    }
  }
}

TEST(Backward, GqaGradientsAreTheSummedGradientsOfTheRepeatedMhaProblem) {
  AttnProblem p = small(Causal::top_left, 5, 7, DType::f16);
  p.hq = 6; p.hkv = 2;
  const AttnInputs in = random_inputs(p, 9);
  const auto [m, mi] = flashprobe::testing::gqa_as_mha(p, in);
  const Tensor dout = random_normal(p.out_dtype, p.o_span(), 10);
  const Gradients g = reference_backward(p, in, dout), gm = reference_backward(m, mi, dout);
  EXPECT_LE(max_diff(g.dq, gm.dq), 1e-13);
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int kv = 0; kv < p.hkv; ++kv)
        for (int x = 0; x < p.d; ++x) {
          double sum = 0;
          for (int h = kv * 3; h < kv * 3 + 3; ++h) sum += gm.dk[Gradients::dk_index(m, b, j, h, x)];
          EXPECT_NEAR(g.dk[Gradients::dk_index(p, b, j, kv, x)], sum, 1e-13);
        }
}

TEST(Backward, EmulationIsCloseToExactAndRoundsWhereFa2Does) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    AttnProblem p = small(Causal::bottom_right, 40, 64, t);
    p.d = 64; p.dv = 64;
    const AttnInputs in = random_inputs(p, 11);
    const Tensor dout = random_normal(p.out_dtype, p.o_span(), 12);
    const Gradients r = reference_backward(p, in, dout), e = emulate_backward(p, in, {dout, {}, {}});
    const double rel = t == DType::f32 ? 1e-5 : t == DType::f16 ? 2e-2 : 1e-1;
    for (auto [a, b] : {std::pair{&r.dq, &e.dq}, {&r.dk, &e.dk}, {&r.dv, &e.dv}}) {
      const double err = max_diff(*a, *b);
      EXPECT_LE(err, rel * max_abs(*a)) << dtype_name(t);
      EXPECT_GT(err, 0.0) << dtype_name(t);  // low precision is never exact on these sizes
      for (double v : *b) EXPECT_EQ(round_to(t, v), v);
    }
  }
}

TEST(Backward, EmulationReadsTheGivenForward) {
  AttnProblem p = small(Causal::none, 8, 9, DType::f16);
  const AttnInputs in = random_inputs(p, 13);
  const Tensor dout = random_normal(p.out_dtype, p.o_span(), 14);
  const Reference fwd = emulate_low_precision(p, in);
  BackwardInputs bw{dout, Tensor(p.out_dtype, p.o_span()), {}};
  for (std::size_t i = 0; i < fwd.o.size(); ++i) bw.o.set(static_cast<std::int64_t>(i), fwd.o[i]);
  bw.lse.assign(fwd.lse.begin(), fwd.lse.end());
  const Gradients same = emulate_backward(p, in, bw), implicit = emulate_backward(p, in, {dout, {}, {}});
  EXPECT_EQ(same.dq, implicit.dq);
  EXPECT_EQ(same.dk, implicit.dk);
  // A different O moves D and with it dQ; a different LSE scales P and with it dV.
  BackwardInputs o2 = bw;
  o2.o.set(0, fwd.o[0] + 0.5);
  EXPECT_NE(emulate_backward(p, in, o2).dq, same.dq);
  BackwardInputs l2 = bw;
  for (float& v : l2.lse) v += 1.0f;
  EXPECT_NE(emulate_backward(p, in, l2).dv, same.dv);
}

TEST(Backward, TermsBoundTheGradients) {
  AttnProblem p = small(Causal::bottom_right, 16, 16, DType::bf16);
  p.d = 32; p.dv = 16;
  const AttnInputs in = random_inputs(p, 15);
  const Gradients g = reference_backward(p, in, random_normal(p.out_dtype, p.o_span(), 16));
  EXPECT_LE(max_abs(g.dq), g.terms.dq_terms);
  EXPECT_LE(max_abs(g.dk), g.terms.dk_terms);
  EXPECT_LE(max_abs(g.dv), g.terms.dv_terms);
  EXPECT_GT(g.terms.s_max, 0.0);
  // Bottom-right causal, sq = sk: row i sees i + 1 keys (mean 8.5); key j is seen by sq - j rows of
  // each of the 2 heads of its group (mean 2 * 8.5).
  EXPECT_DOUBLE_EQ(g.terms.dq_mean_terms, 8.5);
  EXPECT_DOUBLE_EQ(g.terms.dk_mean_terms, 17.0);
}

TEST(Backward, BadInputsAreUsageErrors) {
  AttnProblem p = small(Causal::none, 3, 3, DType::f16);
  const AttnInputs in = random_inputs(p, 17);
  EXPECT_THROW(reference_backward(p, in, random_normal(DType::f32, p.o_span(), 1)), UsageError);
  EXPECT_THROW(reference_backward(p, in, random_normal(DType::f16, p.o_span() - 1, 1)), UsageError);
  BackwardInputs bw{random_normal(DType::f16, p.o_span(), 1), {}, std::vector<float>(5, 0.f)};
  EXPECT_THROW(emulate_backward(p, in, bw), UsageError);
}
