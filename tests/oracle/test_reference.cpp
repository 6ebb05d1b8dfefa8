// The double oracle against the independent long-double loops, analytic cases and layouts.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "compare_util.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/reference.h"
#include "naive_reference.h"
#include "problem_gen.h"

using namespace flashprobe;
using namespace flashprobe::oracle;
using flashprobe::test::agree;

namespace {
// Both references computed in double/long double from the same stored inputs agree to ~1e-12
// relative (the long double loop's own error is far smaller; the bound is for the double one).
constexpr double kAgree = 1e-12;

void expect_matches_naive(const AttnProblem& p, std::uint64_t seed) {
  const AttnInputs in = random_inputs(p, seed);
  const Reference r = reference(p, in);
  const auto n = test::naive_attention(p, in);
  EXPECT_EQ(agree(r.o, n.o, kAgree, "O"), "") << p.id();
  EXPECT_EQ(agree(r.lse, n.lse, kAgree, "LSE"), "") << p.id();
}

// Sets every element of a [B, S, H, D] tensor with f(b, s, h, x).
template <class F>
void fill(Tensor& t, const Strides& st, int B, int S, int H, int D, F f) {
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < H; ++h)
        for (int x = 0; x < D; ++x) t.set(offset(st, b, s, h, x), f(b, s, h, x));
}
}  // namespace

TEST(Reference, MatchesNaiveOnTheFeatureMatrix) {
  int n = 0;
  for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left})
    for (int sk : {0, 1, 2, 3, 7, 40})
      for (int sq : {1, 3, 17})
        for (int variant = 0; variant < 4; ++variant) {
          AttnProblem p;
          p.batch = 2; p.hq = 6; p.hkv = 2; p.sq = sq; p.sk = sk; p.d = 59; p.dv = 40;
          p.dtype = variant % 2 ? DType::bf16 : DType::f16;
          p.causal = c;
          if (variant == 1) { p.window_left = 2; p.window_right = 1; }
          if (variant == 2) { p.softcap = 5; p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625, 0.03, 0.01}; }
          if (variant == 3) { p.seqlens_k = {sk / 2, sk}; p.with_layout(TensorLayout::bhsd); }
          expect_matches_naive(p, static_cast<std::uint64_t>(++n));
        }
}

TEST(Reference, LargeHeadDimsAndRowBlocksMatchNaive) {
  // More rows than one Eigen row block (64) and a causal diagonal crossing blocks.
  AttnProblem p;
  p.hq = 3; p.hkv = 1; p.sq = 150; p.sk = 203; p.d = 256; p.dv = 111; p.dtype = DType::f32;
  p.causal = Causal::bottom_right;
  expect_matches_naive(p, 5);
}

TEST(Reference, ThreadedFullComputationMatchesNaive) {
  // Big enough to run on several threads, both scheduling paths (few groups, many groups).
  for (int hkv : {1, 8}) {
    AttnProblem p;
    p.batch = 1; p.hq = 8; p.hkv = hkv; p.sq = 96; p.sk = 300; p.d = 64; p.dv = 64;
    p.causal = Causal::top_left;
    expect_matches_naive(p, 11);
  }
}

RC_GTEST_PROP(Reference, MatchesNaiveOnRandomProblems, ()) {
  const AttnProblem p = *test::gen_problem();
  const AttnInputs in = random_inputs(p, *rc::gen::arbitrary<std::uint64_t>());
  const Reference r = reference(p, in);
  const auto n = test::naive_attention(p, in);
  RC_ASSERT(agree(r.o, n.o, kAgree, "O") == "");
  RC_ASSERT(agree(r.lse, n.lse, kAgree, "LSE") == "");
}

TEST(Reference, UniformScoresGiveTheMeanOfV) {
  AttnProblem p;
  p.sq = 3; p.sk = 5; p.d = 4; p.dv = 3; p.dtype = DType::f32;
  AttnInputs in = random_inputs(p, 1);
  fill(in.k, p.k_strides(), 1, p.sk, 1, p.d, [](int, int, int, int x) { return 0.25 * (x + 1); });  // identical keys
  const Reference r = reference(p, in);
  for (int i = 0; i < p.sq; ++i) {
    for (int x = 0; x < p.dv; ++x) {
      double mean = 0;
      for (int j = 0; j < p.sk; ++j) mean += in.v.get(offset(p.v_strides(), 0, j, 0, x)) / p.sk;
      EXPECT_NEAR(r.o[r.o_index(p, 0, i, 0, x)], mean, 1e-15);
    }
    double s = 0;  // every score is the same: LSE = s + log(Sk)
    for (int x = 0; x < p.d; ++x) s += in.q.get(offset(p.q_strides(), 0, i, 0, x)) * 0.25 * (x + 1);
    EXPECT_NEAR(r.lse[r.lse_index(p, 0, 0, i)], s * p.effective_scale() + std::log(5.0), 1e-14);
  }
}

TEST(Reference, OneDominantKeyGivesItsValueRow) {
  AttnProblem p;
  p.sq = 1; p.sk = 6; p.d = 2; p.dv = 4; p.dtype = DType::f32; p.scale = 1;
  AttnInputs in = random_inputs(p, 2);
  fill(in.q, p.q_strides(), 1, 1, 1, 2, [](int, int, int, int) { return 1.0; });
  fill(in.k, p.k_strides(), 1, p.sk, 1, 2, [](int, int j, int, int) { return j == 4 ? 500.0 : 0.0; });
  const Reference r = reference(p, in);
  for (int x = 0; x < p.dv; ++x) EXPECT_EQ(r.o[r.o_index(p, 0, 0, 0, x)], in.v.get(offset(p.v_strides(), 0, 4, 0, x)));
  EXPECT_NEAR(r.lse[0], 1000.0, 1e-12);  // log(e^1000 + 5 e^0): exact to double precision
}

TEST(Reference, RowsThatSeeNoKeyGiveZeroAndMinusInfinity) {
  AttnProblem p;
  p.batch = 2; p.sq = 4; p.sk = 0; p.d = 8; p.dv = 8;
  const AttnInputs in = random_inputs(p, 3);
  Reference r = reference(p, in);
  for (double v : r.o) EXPECT_EQ(v, 0.0);
  for (double v : r.lse) EXPECT_EQ(v, -INFINITY);
  // Top-left causal with Sq > Sk: nothing is masked away by the alignment, but a left window of 0
  // after the last key leaves rows past Sk empty.
  p.sk = 2; p.causal = Causal::top_left; p.window_left = 0;
  r = reference(p, random_inputs(p, 4));
  EXPECT_EQ(r.lse[r.lse_index(p, 0, 0, 3)], -INFINITY);
  EXPECT_TRUE(std::isfinite(r.lse[r.lse_index(p, 0, 0, 1)]));
}

TEST(Reference, LayoutsGiveTheSameResult) {
  AttnProblem p;
  p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 9; p.sk = 13; p.d = 24; p.dv = 16; p.causal = Causal::bottom_right;
  const AttnInputs in = random_inputs(p, 6);
  const Reference base = reference(p, in);
  for (int layout = 0; layout < 2; ++layout) {
    AttnProblem q = p;
    if (layout == 0) q.with_layout(TensorLayout::bhsd);
    else {
      q.q = test::padded_strides(q.sq, q.hq, q.d, 7);
      q.k = test::padded_strides(q.sk, q.hkv, q.d, 1);
      q.v = test::padded_strides(q.sk, q.hkv, q.dv, 2);
    }
    AttnInputs in2{Tensor(q.dtype, q.q_span()), Tensor(q.dtype, q.k_span()), Tensor(q.dtype, q.v_span())};
    fill(in2.q, q.q_strides(), q.batch, q.sq, q.hq, q.d, [&](int b, int s, int h, int x) { return in.q.get(offset(p.q_strides(), b, s, h, x)); });
    fill(in2.k, q.k_strides(), q.batch, q.sk, q.hkv, q.d, [&](int b, int s, int h, int x) { return in.k.get(offset(p.k_strides(), b, s, h, x)); });
    fill(in2.v, q.v_strides(), q.batch, q.sk, q.hkv, q.dv, [&](int b, int s, int h, int x) { return in.v.get(offset(p.v_strides(), b, s, h, x)); });
    const Reference r = reference(q, in2);
    EXPECT_EQ(r.o, base.o) << "layout " << layout;
    EXPECT_EQ(r.lse, base.lse) << "layout " << layout;
  }
}

TEST(Reference, EmulationIsCloseButNotExact) {
  AttnProblem p;
  p.hq = 2; p.sq = 16; p.sk = 300; p.d = 64; p.dv = 64; p.dtype = p.out_dtype = DType::bf16;
  const AttnInputs in = random_inputs(p, 8);
  const Reference r = reference(p, in), e = emulate_low_precision(p, in);
  double err = 0, mx = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) {
    err = std::max(err, std::abs(r.o[i] - e.o[i]));
    mx = std::max(mx, std::abs(r.o[i]));
    EXPECT_EQ(e.o[i], round_to(DType::bf16, e.o[i])) << "emulated O must be representable in bf16";
  }
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, 4 * dtype_eps(DType::bf16) * mx);
}

TEST(Reference, RejectsInputsThatDoNotFit) {
  AttnProblem p;
  p.sk = 4;
  AttnInputs in = random_inputs(p, 1);
  in.k.bytes.resize(in.k.bytes.size() - 2);
  EXPECT_THROW(reference(p, in), UsageError);
  in = random_inputs(p, 1);
  in.v.dtype = DType::bf16;
  EXPECT_THROW(reference(p, in), UsageError);
  EXPECT_THROW(reference_rows(p, random_inputs(p, 1), {0, 1}), UsageError);  // sq = 1: row 1 does not exist
}
