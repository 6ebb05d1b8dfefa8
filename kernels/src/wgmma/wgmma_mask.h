#pragma once
// The wgmma consumers' mask in 32-bit affine form (WGMMA_NOTES.md, "d64 against cuDNN, profiled";
// the shipped kernel where sq + sk <= kMaxLen32). The consumer before it (kept as wgmma/mask=visible)
// ran four 64-bit visible_range calls per row block and thread (343 SASS instructions a warp, 9-10 %
// of the d64 S 512 kernel's stall samples, Nsight) and tested each score of a masked tile against
// absolute key indices; here one batch's mask is two offsets,
// a row's interval two adds and two clamps, and a masked score one compare of a compile-time column
// offset against two per-row limits. Plain constexpr code that the kernel (wgmma_consumer.cuh) and a
// CPU test (tests/kernels/test_wgmma_mask.cpp) share; the test checks it against
// AttnProblem::visible_range, the oracle's rule, for every row and key of many masks.
//
// Premise: rows and keys in 32 bits, sq + keys <= kMaxLen32 (params.h; the launch takes the
// visible_range consumer otherwise). Then every sum below stays inside int: rows up to sq - 1 + 128, keys up to
// keys - 1 + 128, -sq <= lo_off, -sq <= hi_off <= keys.
#include <climits>
#include <cstdint>

#include "flashprobe/core/mask.h"
#include "flashprobe/kernels/params.h"

namespace flashprobe::kernels::dev {

// One batch's mask: row i < sq sees keys [max(0, i + lo_off), min(keys - 1, i + hi_off)] (none when
// lo > hi); rows at or past sq see none. The offsets are mask::narrow applied once to an interval
// relative to the diagonal (as attn_common.cuh's visible_offsets32 for mma, with a bound on the
// open left side that stays inside int for every sq the premise allows).
struct AffineMask {
  int lo_off = 0, hi_off = 0, keys = 0, sq = 0;

  FP_MASK_HD constexpr void row(int i, int& lo, int& hi) const {
    if (i >= sq) {
      lo = 1;
      hi = 0;
      return;
    }
    lo = i + lo_off > 0 ? i + lo_off : 0;
    hi = i + hi_off < keys - 1 ? i + hi_off : keys - 1;
  }

  // The keys every row of [r0, r0 + rows) sees, [lo_max, hi_min] (lo and hi grow with the row, so the
  // last row's lo and the first row's hi); where a row lies past sq, none (lo_max = INT_MAX): a tile
  // inside it needs no per-score test.
  FP_MASK_HD constexpr void whole(int r0, int rows, int& lo_max, int& hi_min) const {
    lo_max = INT_MAX;
    hi_min = INT_MIN;
    if (r0 + rows > sq) return;
    int t = 0;
    row(r0 + rows - 1, lo_max, t);
    row(r0, t, hi_min);
  }
};

// The premise: the launch (wgmma_launch.cuh) runs the affine mask where this holds for the problem's
// sq and sk (its largest key count), the visible_range consumer otherwise.
FP_MASK_HD constexpr bool affine_mask_fits(std::int64_t sq, std::int64_t keys) { return sq + keys <= kMaxLen32; }

// diag: diag_offset of the batch (key j is on row i's diagonal when j = i + diag).
FP_MASK_HD constexpr AffineMask affine_mask(std::int64_t diag, int keys, int sq, bool causal, int window_left,
                                            int window_right) {
  // Without a left window lo_off = -sq: every row below sq sees key 0 (row() answers rows past sq
  // itself), and -sq fits an int where sq + 65536, visible_offsets32's bound, may not.
  const std::int64_t far = sq;
  std::int64_t lo = -far, hi = keys;
  mask::narrow(diag, causal, window_left, window_right, lo, hi);
  return {static_cast<int>(lo), static_cast<int>(hi < -far ? -far : hi), keys, sq};
}

// Whether every lane's columns are its first column plus offsets the same for all lanes
// (col(lane, q) = col(lane, 0) + col(0, q) - col(0, 0)): then a masked score is tested with a
// compile-time offset against per-row limits taken relative to the lane's first column.
template <class L>
constexpr bool cols_affine_in_lane() {
  for (int l = 0; l < L::kWave; ++l)
    for (int q = 0; q < L::kC; ++q)
      if (L::c(l, q).col - L::c(l, 0).col != L::c(0, q).col - L::c(0, 0).col) return false;
  return true;
}

// Slot q's column offset from the lane's first column (cols_affine_in_lane).
template <class L>
constexpr int col_offset(int q) {
  return L::c(0, q).col - L::c(0, 0).col;
}

// The score at column offset dc of a lane whose row sees [lo, hi], in the tile starting at key kv0,
// the lane's first column at c0: masked iff kv0 + c0 + dc lies outside [lo, hi]. The limits are
// computed once per row and tile (limits()), the test per score (masked()).
FP_MASK_HD constexpr void limits(int lo, int hi, int kv0, int c0, int& a, int& b) {
  a = lo - kv0 - c0;
  b = hi - kv0 - c0;
}
FP_MASK_HD constexpr bool masked(int dc, int a, int b) { return dc < a || dc > b; }

}  // namespace flashprobe::kernels::dev
