// flashprobe/core/mask_hull.h against mask.h row by row: for every small shape, alignment, mask,
// window, key block and tile size, the tiles query_tiles_seeing names are exactly the first to the
// last tile holding a row that sees a key of the block (none when no row does), with the row
// offsets the kernels derive (kernels/src/attn_common.cuh, visible_offsets32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "flashprobe/core/mask.h"
#include "flashprobe/core/mask_hull.h"

namespace mask = flashprobe::mask;

namespace {
struct Mask {
  bool top_left, causal;
  int wl, wr;
};

// Row i's keys, as the oracle's problem logic reads the mask.
void row_keys(const Mask& m, int keys, int sq, int i, std::int64_t& lo, std::int64_t& hi) {
  lo = 0;
  hi = keys - 1;
  mask::narrow<std::int64_t>(i + mask::diag_offset(m.top_left, keys, sq), m.causal, m.wl, m.wr, lo, hi);
}

// visible_offsets32's offsets: the same narrowing from an open row, the far end clamped.
void offsets(const Mask& m, int keys, int sq, int& lo_off, int& hi_off) {
  const std::int64_t far = std::int64_t{sq} + 65536;
  std::int64_t lo = -far, hi = keys;
  mask::narrow<std::int64_t>(mask::diag_offset(m.top_left, keys, sq), m.causal, m.wl, m.wr, lo, hi);
  lo_off = static_cast<int>(lo);
  hi_off = static_cast<int>(hi < -far ? -far : hi);
}
}  // namespace

TEST(MaskHull, QueryTilesAreTheFirstToLastTileWithARowSeeingTheBlock) {
  int blocks = 0, empty = 0, partial = 0;
  for (bool top_left : {false, true})
    for (bool causal : {false, true})
      for (int wl : {-1, 0, 2, 5})
        for (int wr : {-1, 0, 3})
          for (int keys = 0; keys <= 13; ++keys)
            for (int sq = 1; sq <= 13; ++sq)
              for (int block : {1, 4, 5})
                for (int tile : {1, 3, 4})
                  for (int kb = 0; kb <= keys + block; kb += block) {
                    const Mask m{top_left, causal, wl, wr};
                    int lo_off, hi_off;
                    offsets(m, keys, sq, lo_off, hi_off);
                    int want_first = -1, want_last = -1;
                    for (int i = 0; i < sq; ++i) {
                      std::int64_t lo, hi;
                      row_keys(m, keys, sq, i, lo, hi);
                      const std::int64_t a = std::max<std::int64_t>(lo, kb),
                                         b = std::min<std::int64_t>(hi, std::int64_t{kb} + block - 1);
                      if (a > b) continue;
                      if (want_first < 0) want_first = i / tile;
                      want_last = i / tile;
                    }
                    int first = -7, count = -7;
                    mask::query_tiles_seeing(kb, block, keys, sq, lo_off, hi_off, tile, first, count);
                    const int want_count = want_first < 0 ? 0 : want_last - want_first + 1;
                    ASSERT_EQ(count, want_count)
                        << "top_left " << top_left << " causal " << causal << " window (" << wl << ", " << wr
                        << ") keys " << keys << " sq " << sq << " block " << block << " at " << kb << " tile " << tile;
                    if (want_count > 0) {
                      ASSERT_EQ(first, want_first) << "keys " << keys << " sq " << sq << " block at " << kb;
                      partial += want_count < (sq + tile - 1) / tile;
                    }
                    empty += want_count == 0;
                    ++blocks;
                  }
  EXPECT_GT(blocks, 100000);
  EXPECT_GT(empty, 10000);    // blocks past the keys or outside every row's window
  EXPECT_GT(partial, 10000);  // the hull skips tiles
}

static_assert([] {
  int first = -1, count = -1;
  // Causal bottom-right, 8 rows over 8 keys, keys 4..7 in tiles of 2 rows: rows 4..7, tiles 2 and 3.
  flashprobe::mask::query_tiles_seeing(4, 4, 8, 8, -(8 + 65536), 0, 2, first, count);
  return first == 2 && count == 2;
}());
