// The wgmma consumers' affine mask (src/wgmma/wgmma_mask.h), replayed on the CPU against AttnProblem's
// visible_range (the oracle's rule): for many masks (no mask, causal with either alignment, windows
// on either side, sq above and below the key count, key counts that are not a tile multiple) every
// row up to 128 past sq gets exactly its visible interval, the warpgroup's whole-tile bounds name
// exactly the tiles all 64 rows see whole, and every lane's per-score test of the wgmma C layout
// (compile-time column offset against per-row limits) masks exactly the keys outside the row's
// interval. A deliberate off-by-one in each part fails the same replay.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "flashprobe/atoms/sm90_wgmma_layout.h"
#include "flashprobe/core/problem.h"
#include "src/wgmma/wgmma_mask.h"
#include "../common/test_problem.h"

namespace flashprobe::kernels::dev {
namespace {

// What the replay may break on purpose, to show that it catches it.
struct Slip {
  int hi_off = 0;      // added to the mask's hi_off
  int whole_lo = 0;    // added to whole()'s lo_max
  int limit_b = 0;     // added to the per-score upper limit
};

AffineMask mask_of(const AttnProblem& p, int b, const Slip& s) {
  AffineMask m = affine_mask(p.diag_offset(b), p.keys(b), p.sq, p.causal != Causal::none, p.window_left, p.window_right);
  m.hi_off += s.hi_off;
  return m;
}

// Mismatches of the three parts for problem p, batch 0 (empty: all agree), at most a few named.
template <int N>
std::string replay(const AttnProblem& p, const Slip& s = {}) {
  using L = atoms::SM90_64xNx16_Layout<N>;
  const AffineMask m = mask_of(p, 0, s);
  const int keys = p.keys(0);
  // Rows: each row's interval, also past sq (none there).
  for (int i = 0; i < p.sq + 128; ++i) {
    int lo = 0, hi = 0;
    m.row(i, lo, hi);
    std::int64_t elo = 1, ehi = 0;
    if (i < p.sq) p.visible_range(0, i, elo, ehi);
    const bool empty = lo > hi, eempty = elo > ehi;
    if (empty != eempty || (!empty && (lo != elo || hi != ehi)))
      return "row " + std::to_string(i) + ": [" + std::to_string(lo) + ", " + std::to_string(hi) + "], expected [" +
             std::to_string(elo) + ", " + std::to_string(ehi) + "]";
  }
  // Warpgroups (64 rows from a multiple of 64) and tiles (N keys from a multiple of N, up to one past the keys).
  for (int r0 = 0; r0 < p.sq + 64; r0 += 64)
    for (int kv0 = 0; kv0 < keys + N; kv0 += N) {
      int lo_max = 0, hi_min = 0;
      m.whole(r0, 64, lo_max, hi_min);
      if (lo_max != INT_MAX) lo_max += s.whole_lo;
      const bool said = kv0 >= lo_max && kv0 + N - 1 <= hi_min;
      bool all = r0 + 64 <= p.sq;
      for (int i = r0; all && i < r0 + 64; ++i)
        for (int j = kv0; all && j < kv0 + N; ++j) all = j < keys && p.visible(0, i, j);
      if (said != all)
        return "rows " + std::to_string(r0) + "+64, tile " + std::to_string(kv0) + ": whole " + std::to_string(said) +
               ", expected " + std::to_string(all);
      // Every lane's scores in this tile: masked iff the key is outside the row's interval.
      for (int lt = 0; lt < L::kWave; ++lt)
        for (int q = 0; q < L::kC; ++q) {
          const int i = r0 + L::c(lt, q).row, j = kv0 + L::c(lt, q).col;
          int lo = 0, hi = 0, a = 0, bb = 0;
          m.row(i, lo, hi);
          limits(lo, hi, kv0, L::c(lt, 0).col, a, bb);
          const bool got = masked(col_offset<L>(q), a, bb + s.limit_b);
          const bool want = !(i < p.sq && j < keys && p.visible(0, i, j));
          if (got != want)
            return "row " + std::to_string(i) + " key " + std::to_string(j) + " (lane " + std::to_string(lt) + ", slot " +
                   std::to_string(q) + "): masked " + std::to_string(got) + ", expected " + std::to_string(want);
        }
    }
  return "";
}

AttnProblem mask_problem(int sq, int sk, Causal c, int window_left, int window_right) {
  AttnProblem p = testing::test_problem(1, 1, 1, sq, sk, 64, DType::f16);
  p.causal = c;
  p.window_left = window_left;
  p.window_right = window_right;
  return p;
}

std::vector<AttnProblem> masks() {
  std::vector<AttnProblem> v;
  for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left})
    for (auto [sq, sk] : {std::pair{128, 128}, std::pair{200, 333}, std::pair{333, 200}, std::pair{64, 512}, std::pair{256, 100},
                          std::pair{1, 300}, std::pair{130, 1}})
      for (auto [wl, wr] : {std::pair{-1, -1}, std::pair{0, 0}, std::pair{3, -1}, std::pair{-1, 5}, std::pair{100, 20}, std::pair{200, -1}})
        v.push_back(mask_problem(sq, sk, c, wl, wr));
  return v;
}

std::string where(const AttnProblem& p) {
  return "sq " + std::to_string(p.sq) + " sk " + std::to_string(p.sk) + " causal " + std::string(causal_name(p.causal)) +
         " window " + std::to_string(p.window_left) + "/" + std::to_string(p.window_right);
}

TEST(WgmmaMask, AffineRowsTilesAndScoresAreTheOraclesMask) {
  static_assert(cols_affine_in_lane<atoms::SM90_64xNx16_Layout<128>>());
  static_assert(cols_affine_in_lane<atoms::SM90_64xNx16_Layout<64>>());
  int n = 0;
  for (const AttnProblem& p : masks()) {
    EXPECT_EQ(replay<128>(p), "") << where(p);
    EXPECT_EQ(replay<64>(p), "") << where(p);
    ++n;
  }
  EXPECT_EQ(n, 3 * 7 * 6);
}

TEST(WgmmaMask, PerBatchKeyCountsTakeTheBatchsOwnDiagonal) {
  AttnProblem p;
  p.batch = 3;
  p.sq = 150;
  p.sk = 400;
  p.seqlens_k = {400, 129, 7};
  for (Causal c : {Causal::bottom_right, Causal::top_left})
    for (int b = 0; b < p.batch; ++b) {
      p.causal = c;
      const AffineMask m = mask_of(p, b, {});
      for (int i = 0; i < p.sq + 128; ++i) {
        int lo = 0, hi = 0;
        m.row(i, lo, hi);
        std::int64_t elo = 1, ehi = 0;
        if (i < p.sq) p.visible_range(b, i, elo, ehi);
        ASSERT_EQ(lo > hi, elo > ehi) << "batch " << b << " row " << i;
        if (lo <= hi) EXPECT_TRUE(lo == elo && hi == ehi) << "batch " << b << " row " << i;
      }
    }
}

// The 32-bit premise at its edge (sq + keys = kMaxLen32, params.h): sampled rows.
TEST(WgmmaMask, RowsAtTheThirtyTwoBitEdgeAgree) {
  for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left})
    for (auto [sq, sk] : {std::pair{1 << 30, kMaxLen32 - (1 << 30)}, std::pair{1, kMaxLen32 - 1}, std::pair{kMaxLen32 - 1, 1}})
      for (auto [wl, wr] : {std::pair{-1, -1}, std::pair{0, 0}, std::pair{2147483647, 2147483647}}) {
        const AttnProblem p = mask_problem(sq, sk, c, wl, wr);
        ASSERT_TRUE(affine_mask_fits(sq, sk)) << where(p);
        const AffineMask m = mask_of(p, 0, {});
        for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, std::int64_t{sq} / 2, std::int64_t{sq} - 1, std::int64_t{sq},
                               std::int64_t{sq} + 127}) {
          int lo = 0, hi = 0;
          m.row(static_cast<int>(i), lo, hi);
          std::int64_t elo = 1, ehi = 0;
          if (i < sq) p.visible_range(0, static_cast<int>(i), elo, ehi);
          ASSERT_EQ(lo > hi, elo > ehi) << where(p) << " row " << i;
          if (lo <= hi) EXPECT_TRUE(lo == elo && hi == ehi) << where(p) << " row " << i;
        }
      }
}

// The launch's choice (wgmma_launch.cuh): the affine mask up to sq + sk = kMaxLen32, the visible_range
// consumer one past it, however the sum splits.
TEST(WgmmaMask, TheAffineMaskFitsUpToTheThirtyTwoBitBound) {
  for (std::int64_t sq : {std::int64_t{1}, std::int64_t{kMaxLen32} / 2, std::int64_t{kMaxLen32} - 1}) {
    EXPECT_TRUE(affine_mask_fits(sq, kMaxLen32 - sq)) << sq;
    EXPECT_FALSE(affine_mask_fits(sq, kMaxLen32 - sq + 1)) << sq;
  }
  EXPECT_TRUE(affine_mask_fits(16384, 16384));
  EXPECT_FALSE(affine_mask_fits(std::int64_t{1} << 31, 0));
}

TEST(WgmmaMask, TheReplayCatchesAnOffByOneInEachPart) {
  AttnProblem p;
  p.sq = 333;
  p.sk = 200;
  p.causal = Causal::bottom_right;
  EXPECT_EQ(replay<128>(p), "");
  EXPECT_NE(replay<128>(p, Slip{.hi_off = 1}), "");
  EXPECT_NE(replay<128>(p, Slip{.limit_b = 1}), "");
  p.causal = Causal::none;
  p.sq = p.sk = 333;
  p.window_left = 62;  // the last row of a warpgroup at r0 sees from r0 + 1: the tile at r0 is one key short of whole
  EXPECT_EQ(replay<64>(p), "");
  EXPECT_NE(replay<64>(p, Slip{.whole_lo = -1}), "");
  EXPECT_NE(replay<64>(p, Slip{.limit_b = -1}), "");
}

// A layout whose lanes hold their columns in different orders: the compile-time offsets would be wrong.
struct ShuffledColumns {
  static constexpr int N = 64, kC = 32, kWave = 128;
  static constexpr atoms::Coord c(int lane, int i) {
    const atoms::Coord x = atoms::SM90_64xNx16_Layout<64>::c(lane, i);
    return lane % 2 ? atoms::Coord{x.row, 63 - x.col} : x;
  }
};
TEST(WgmmaMask, ALayoutWithoutAffineColumnsIsRefused) { EXPECT_FALSE(cols_affine_in_lane<ShuffledColumns>()); }

}  // namespace
}  // namespace flashprobe::kernels::dev
