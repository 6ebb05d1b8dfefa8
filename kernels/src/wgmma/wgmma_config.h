#pragma once
// The wgmma kernel's tile configuration and shared-memory addressing, as plain constexpr code that
// the kernel (wgmma_attn.cuh) and a CPU test (tests/kernels/test_wgmma_smem.cpp) share: the test
// replays the TMA's box placement and the wgmma descriptors' canonical layouts (PTX ISA "Shared
// Memory Matrix Layout", 128- or 64-byte swizzle) through these functions for every element, so a change
// of tile sizes, stage count or descriptor offsets is checked before it reaches a GPU.
//
// D is the tile class's Q/K width; kDv, its V/O width, is the class's (head_dim_classes.h:
// kWgmmaDimClasses).
// Layout in shared memory (1024-byte aligned base), per chunk c of kChunk dims of a tile (64 dims,
// rows of 128 bytes, the 128-byte swizzle; or 32 dims, rows of 64 bytes, the 64-byte swizzle, where
// D or kDv is not a multiple of 64), rows of kRowBytes as the TMA writes them (the swizzle permutes
// the 16-byte pieces of a row by row % 8; wgmma undoes the same permutation, which is a function of
// the address, so both sides agree on the pre-swizzle offsets below):
//   Q          [c < D / kChunk][kBm rows][kChunk]
//   K          [stage][c < D / kChunk][kBn rows][kChunk]
//   V          [stage][c < kDv / kChunk][kBn rows][kChunk]
// Descriptors: Q and K are K-major (A and B of S = Q K^T): element (row m, dim k) of a k-step at
//   start + (m / 8) * kSbo + (m % 8) * kRowBytes + 2 k;
// V is N-major (B of O += P V with B[k = key][n = dim]): element (key k, dim n) at
//   start + (n / kChunk) * kVLbo + (n % kChunk) * 2 + (k / 8) * kSbo + (k % 8) * kRowBytes
// (the N-major canonical layout repeats every kChunk dims: a V tile is whole chunks).
#include <cstdint>

#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels::dev {

// How a consumer warpgroup orders its work on one key tile (all three are correct; which is fastest
// is measured, WGMMA_NOTES.md):
//   serial    S(t), softmax(t), O += P(t) V(t), one after the other;
//   overlap   S(t) issued together with O += P(t-1) V(t-1), softmax(t) while the latter runs
//             (FlashAttention-3's intra-warpgroup overlap);
//   pingpong  overlap, and the two consumer warpgroups take turns issuing their products (named
//             barriers), so that one's softmax runs while the other's products use the tensor cores.
enum class WgmmaSchedule { serial, overlap, pingpong };

// D, Dv: the class's Q/K and V/O widths, a class of kWgmmaFineDimClasses (head_dim_classes.h); Dv
// defaults to the first class of width D's (192: 192/128), for the CPU tests; the kernel names both.
// kStagesWanted: 0 for the class's own stage count (kStages below); n > 0 for exactly n stages (the
// variant wgmma/stages=<n> at 64/64, WGMMA_NOTES.md "wgmma/stages"); the static_asserts hold either way.
template <int D, int Dv = class_dv(kWgmmaFineDimClasses, D), int kStagesWanted = 0>
struct WgmmaConfig {
  static constexpr int kDv = Dv;                             // V and O width of the class
  static constexpr int kBm = kWgmmaBlockRows;                // query rows per block
  static constexpr int kBn = wgmma_tile_keys({D, kDv});       // keys per K/V tile (head_dim_classes.h says why)
  // K/V tiles in flight: as many as fit (at most 3) beside Q, the barriers and the alignment slack in
  // the 227 KB an sm_90 block may have: 3 up to 128/128 (32 + 3 x 64 KB), 2 at 192/128 (48 + 2 x
  // 80 KB) and at 256/256 (64 + 2 x 64 KB).
  static constexpr int kStages = [] {
    if (kStagesWanted > 0) return kStagesWanted;
    // (fixed: Q, 16 barriers of 8 bytes, the most kBars below takes at 3 stages, and the slack)
    const int per_stage = kBn * (D + kDv) * 2, fixed = kBm * D * 2 + 8 * 16 + 1024;
    const int fit = (232448 - fixed) / per_stage;
    return fit < 3 ? fit : 3;
  }();
  static constexpr int kConsumers = 2;    // warpgroups of 64 rows
  // wgmma/l2ahead=on: K/V tiles of the next row block the producer brings into the L2 (with its Q)
  // while the current one runs; 4 covers a whole row block at S = 512 and keeps the grid's prefetched
  // set under 13 MB of the 50 MB L2 at D = 128 (WGMMA_NOTES.md, "Where the fixed cost goes").
  static constexpr int kL2AheadTiles = 4;
  // Warpgroup 0 produces (one thread issues the TMA loads), warpgroups 1.. consume.
  static constexpr int kThreads = (1 + kConsumers) * 128;
  // Registers per thread after setmaxnreg (sm90_roles.cuh): the producer gives back, the consumers
  // take, and both draw on what the block was given at launch, not on the SM's whole file: the
  // compiler caps a one-block-per-SM kernel at 65536 / kThreads rounded down to a multiple of 8
  // (168 at 384 threads), and a consumer asking for more than the producer freed waits in
  // setmaxnreg forever (a hang no mbarrier watchdog sees: the H100 run at 32 / 240 did that).
  static constexpr int kEntryRegs = (65536 / kThreads) / 8 * 8;
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;
  // 16-bit elements per swizzled row: 64 (128 bytes) where D and kDv are multiples of 64, else 32.
  static constexpr int kChunk = D % 64 == 0 && kDv % 64 == 0 ? 64 : 32;
  static constexpr int kRowBytes = kChunk * 2;   // also the swizzle's width (128 or 64 bytes)
  static constexpr int kStepsPerChunk = kChunk / 16;  // 16-dim k-steps of S in a chunk
  static constexpr int kChunks = D / kChunk;     // of a Q or K row
  static constexpr int kVChunks = kDv / kChunk;  // of a V row
  static constexpr int kQBytes = kBm * D * 2;
  static constexpr int kKTileBytes = kBn * D * 2;
  static constexpr int kVTileBytes = kBn * kDv * 2;
  static constexpr int kKOff = kQBytes;
  static constexpr int kVOff = kKOff + kStages * kKTileBytes;
  static constexpr int kBarOff = kVOff + kStages * kVTileBytes;
  // q_full, q_empty, k_full[], v_full[], k_empty[], v_empty[], v_land (a tile whose V tail is zeroed)
  static constexpr int kBars = 3 + 4 * kStages;
  static constexpr int kSmemBytes = kBarOff + 8 * kBars + 1024;  // + slack to align the base to 1024
  static_assert(128 * kProducerRegs + kConsumers * 128 * kConsumerRegs <= kThreads * kEntryRegs,
                "the consumers would take more registers than the producer gives back: setmaxnreg would hang");
  static_assert(has_class(kWgmmaFineDimClasses, D, Dv), "D/Dv must be a class of kWgmmaFineDimClasses");
  static_assert(D % kChunk == 0 && kDv % kChunk == 0, "the TMA boxes are kChunk dims wide: D and kDv whole chunks");
  static_assert(D % 32 == 0 && kDv % 32 == 0, "the narrowest swizzled row (64 bytes) is 32 dims: D and kDv multiples of 32");
  static_assert(kBm == kConsumers * 64, "a consumer warpgroup owns the 64 rows of one wgmma tile");
  static_assert(kStages >= 2, "fewer than two K/V stages: the producer could not load ahead of the consumers");
  static_assert(kSmemBytes <= 232448, "more dynamic shared memory than an sm_90 block may have (227 KB)");

  // Descriptor strides: SBO = 8 rows (K-major) or 8 keys (N-major) of kRowBytes; V's LBO = the next
  // chunk; K-major LBO is unused with a swizzle (one 16-byte unit).
  static constexpr std::uint32_t kSbo = 8 * kRowBytes;
  static constexpr std::uint32_t kVLbo = kBn * kRowBytes;
  static constexpr std::uint32_t kKLbo = 16;

  // Byte offsets of the descriptor start addresses: warpgroup wg's 64 rows of Q, then k-step kk
  // (16 dims) of S inside them; stage st and k-step kk from the K region; stage st and k-step ks
  // (16 keys) of P·V from the V region.
  static constexpr int q_rows(int wg) { return wg * 64 * kRowBytes; }
  static constexpr int q_start(int kk) {
    return (kk / kStepsPerChunk) * kBm * kRowBytes + (kk % kStepsPerChunk) * 32;
  }
  static constexpr int k_start(int st, int kk) {
    return st * kKTileBytes + (kk / kStepsPerChunk) * kBn * kRowBytes + (kk % kStepsPerChunk) * 32;
  }
  static constexpr int v_start(int st, int ks) { return st * kVTileBytes + ks * 16 * kRowBytes; }

  // Where the TMA puts element (row, dim) of a box-filled tile of `rows` rows (pre-swizzle offset).
  static constexpr int tma_offset(int rows, int row, int dim) {
    return (dim / kChunk) * rows * kRowBytes + row * kRowBytes + (dim % kChunk) * 2;
  }
};

// The persistent grid's work list: a block takes items blockIdx.x, blockIdx.x + gridDim.x, ... Under
// a causal mask (paired) each item is two 128-row blocks of one (batch, head), m = nm - 1 - p and
// m = p (one block when they coincide): row block m sees about m + 1 key tiles, so the two of an
// item see nm + 1 together, every item costs the same, and the fixed stride over items balances the
// blocks without an atomic counter; the heavier row block comes first. Without a mask every row
// block costs the same and an item may be one row block (pair_row_blocks says when). Items of one
// (batch, head) are consecutive and heads of one kv head adjacent, so blocks running at the same
// time share K and V in the L2.
struct WgmmaWorkList {
  int nm;     // row blocks per (batch, head): ceil(sq / kBm)
  int hq;     // query heads
  int batch;
  bool paired;
  struct RowBlock {
    int m, h, b;
  };
  constexpr int per_group() const { return paired ? (nm + 1) / 2 : nm; }
  // The kernel counts items in 32 bits: the registry refuses a list longer than INT32_MAX.
  constexpr std::int64_t items() const { return std::int64_t{per_group()} * hq * batch; }
  // Row blocks in item w: 2, or 1 unpaired and for the middle row block of an odd nm.
  constexpr int count(int w) const {
    if (!paired) return 1;
    const int pr = w % per_group();
    return nm - 1 - pr == pr ? 1 : 2;
  }
  // A block's walk takes items first, first + stride, ... and each item's row blocks in order. The
  // row block after (w, k) in that walk: true and (w2, k2), or false at the walk's end. w + stride is
  // formed only below items(), so that it cannot overflow (items() <= INT32_MAX).
  constexpr bool next_in_walk(int w, int k, int stride, int& w2, int& k2) const {
    if (k + 1 < count(w)) {
      w2 = w;
      k2 = k + 1;
      return true;
    }
    if (w >= items() - stride) return false;
    w2 = w + stride;
    k2 = 0;
    return true;
  }
  // Row block k (0: the heavier) of item w.
  constexpr RowBlock row_block(int w, int k) const {
    const int pr = w % per_group(), g = w / per_group();
    const int m = !paired ? pr : k == 0 ? nm - 1 - pr : pr;
    return {m, g % hq, g / hq};
  }
};

// Whether the work list pairs row blocks. Under a causal mask always (balance). Without one the H100
// measured singles faster at D = 128 (median +8 % over the prefill grid) and pairs faster at D = 64
// (singles -6 %, Whisper's S = 1500 -18 %), in one call (reports/data/h100-80gb-hbm3/
// 2026-11-24-wgmma-pairing/): an empirical rule, not yet explained (WGMMA_NOTES.md).
template <int D>
constexpr bool pair_row_blocks(bool causal) {
  return causal || D == 64;
}

// The work list of a problem: row blocks of kBm query rows per (batch, head), paired as above.
template <int D>
constexpr WgmmaWorkList work_list_of(std::int64_t sq, int hq, int batch, bool causal) {
  return {static_cast<int>((sq + kWgmmaBlockRows - 1) / kWgmmaBlockRows), hq, batch,
          pair_row_blocks<D>(causal)};
}

// wgmma/align=sector (WGMMA_NOTES.md "Rows that start mid-sector"): the dims by which a tensor's TMA
// boxes start before its dim 0, so that every box row begins on a 32-byte L2 sector. A row of d 16-bit
// elements with d % 16 == 8 is an odd number of 16-byte pieces, so in a [b, s, h, d] tensor every
// other head's rows start 16 bytes into a sector (the TMA's 16-byte alignment leaves 0 or 16), and
// each box row (64 or 128 bytes) then touches one sector more than its bytes fill, which the next
// chunk's box reads again: 13 sectors per row of d = 136 instead of 9. Boxes that start 8 dims (16
// bytes) earlier read the same row in its 9 sectors; the 8 columns before dim 0 arrive as zeros (the
// TMA's fill for coordinates below 0), which S = Q K^T adds as zeros when Q and K take the same
// shift, and which O's columns (V's shift) carry as zeros that are never stored.
//   row0_byte          the address of the tensor's first row of this (batch, head) (16-byte aligned)
//   row_stride_bytes   between consecutive rows (seq); rows   the tensor's rows (seq length)
//   dim                the tensor's d or dv; width   the tile class's D or kDv
// 8 where the rows start 16 bytes into a sector, all rows alike (a single row, or a stride of whole
// sectors) and the shifted row still fits the tile (dim + 8 <= width); else 0.
inline constexpr int kSectorBytes = 32;
inline constexpr int kSectorShiftDims = 8;
constexpr int sector_shift(std::uint64_t row0_byte, std::int64_t row_stride_bytes, std::int64_t rows, int dim, int width) {
  const bool mid = row0_byte % kSectorBytes == kSectorBytes / 2;
  const bool alike = rows <= 1 || row_stride_bytes % kSectorBytes == 0;
  return mid && alike && dim + kSectorShiftDims <= width ? kSectorShiftDims : 0;
}
// Whether sector_shift is nonzero for some (batch, head) of a [batch, seq, heads, dim] tensor of 2-byte
// elements at byte address `base` with element strides sb, ss, sh: a head's first address mod 32
// repeats every 16 batches and 16 heads (2 x 16 x stride is whole sectors), so 16 x 16 of them decide.
// The launch of wgmma/align=sector runs the shipped kernel where neither K nor V shifts anywhere.
constexpr bool any_sector_shift(std::uint64_t base, std::int64_t sb, std::int64_t ss, std::int64_t sh, int batch,
                                std::int64_t seq, int heads, int dim, int width) {
  for (int b = 0; b < batch && b < 16; ++b)
    for (int h = 0; h < heads && h < 16; ++h)
      if (sector_shift(base + 2 * static_cast<std::uint64_t>(b * sb + h * sh), 2 * ss, seq, dim, width) != 0) return true;
  return false;
}

// The two 32-bit words of a wgmma matrix descriptor with a swizzle of `swizzle_bytes` (128 or 64):
// start address, LBO and SBO in 16-byte units in bits 0-13, 16-29 and 32-45, base offset 0, layout
// type in bits 62-63 (1: 128-byte swizzle, 2: 64-byte).
struct DescWords {
  std::uint32_t lo, hi;
};
constexpr DescWords desc_words_swizzled(std::uint32_t smem_addr, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes,
                                        int swizzle_bytes) {
  const std::uint32_t layout = swizzle_bytes == 128 ? 1u : 2u;
  return {((smem_addr >> 4) & 0x3FFF) | (((lbo_bytes >> 4) & 0x3FFF) << 16), ((sbo_bytes >> 4) & 0x3FFF) | (layout << 30)};
}

}  // namespace flashprobe::kernels::dev
