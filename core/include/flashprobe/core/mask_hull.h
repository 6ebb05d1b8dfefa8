#pragma once
// Which query tiles a key block must visit: the rows of a mask's hull, for the backward kernels that
// walk the query tiles of one key block (mma_bwd's and mma_bwd_amd's dK/dV kernels). One statement
// for the host and the device; tests/core/test_mask_hull.cpp checks it against mask.h row by row.
#include <cstdint>

#include "flashprobe/core/mask.h"

namespace flashprobe::mask {

// The tiles of tile_rows query rows (tile t: rows t * tile_rows ..) of [0, sq) that hold a row seeing
// a key of the block [kb, kb + block_keys) cut at keys: tiles first .. first + count - 1 (count 0:
// none). Row i sees [max(0, i + lo_off), min(keys - 1, i + hi_off)] (the offsets of
// kernels/src/attn_common.cuh's visible_offsets32, where lo_off <= hi_off): both ends are
// non-decreasing in i, so the rows that see the block are one interval, [kb - hi_off, kend - lo_off]
// cut to [0, sq), kend the block's last key. 64-bit in between: kb - hi_off and kend - lo_off may
// leave int's range at the offsets' clamps.
FP_MASK_HD constexpr void query_tiles_seeing(int kb, int block_keys, int keys, int sq, int lo_off, int hi_off,
                                             int tile_rows, int& first, int& count) {
  first = 0;
  count = 0;
  if (kb < keys) {
    const int kend = (kb + block_keys < keys ? kb + block_keys : keys) - 1;
    const std::int64_t f0 = std::int64_t{kb} - hi_off, f1 = std::int64_t{kend} - lo_off;
    const std::int64_t i0 = f0 > 0 ? f0 : 0, i1 = f1 < sq - 1 ? f1 : sq - 1;
    if (i0 <= i1) {
      first = static_cast<int>(i0 / tile_rows);
      count = static_cast<int>(i1 / tile_rows) - first + 1;
    }
  }
}

}  // namespace flashprobe::mask
