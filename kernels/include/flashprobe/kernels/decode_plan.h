#pragma once
// How the decode kernel cuts its work: pure host functions (and constants shared with the device
// code), so the split-count policy is tested without a GPU.
//
// One block of kDecodeThreads threads runs one (batch, kv head, row tile, key split). A row tile is
// up to kDecodeMaxRowsPerBlock query rows that read the same kv head (heads of one GQA group x the
// sq query positions), so K and V are read once for all of them. Each key row is read by a group of
// `lanes_per_key` lanes, 16 bytes (8 elements) each; the block walks its keys in steps of
// `keys_per_step` = (threads / lanes_per_key) key groups x decode_unroll(rows) keys per group.
//
// Example (H100, 132 SMs; b1 h32 d128 sq1 sk8192): 16 lanes per key, 1 row per block, 8 key groups
// x 4 = 32 keys per step; 32 kv heads in 4 x 132 resident blocks -> one full wave is 16 splits of 16
// steps (512 keys, 512 blocks: decode_splits); decode's plan, one row per block, takes half of it: 8
// splits of 32 steps (1024 keys), 256 blocks (decode_plan_splits).
#include "flashprobe/core/problem.h"

namespace flashprobe::kernels {

inline constexpr int kDecodeThreads = 128;        // 4 waves of 32 (2 of 64)
inline constexpr int kDecodeVecElems = 8;         // 16-bit elements per 16-byte load
inline constexpr int kDecodeMaxRowsPerBlock = 4;  // query rows sharing one pass over K and V
inline constexpr int kDecodeNominalSMs = 132;     // the SM count planned for when no device is known (H100)
inline constexpr int kDecodeMaxKeys = 1 << 30;    // key indices are 32-bit inside the kernel

// Keys per key group and step: 4 / rows, so the K/V registers in flight (two steps' worth) and the
// per-row registers (q, o) share one budget.
constexpr int decode_unroll(int rows_per_block) { return kDecodeMaxRowsPerBlock / rows_per_block; }
// Blocks resident per SM that the register budget is set for (__launch_bounds__): 4 (<= 128
// registers per thread) up to 2 rows per block, 3 (<= 168) at 4 rows.
constexpr int decode_blocks_per_sm(int rows_per_block) { return rows_per_block <= 2 ? 4 : 3; }

struct DecodeGeometry {
  int lanes_per_key = 1;   // power of two >= ceil(max(d, dv) / 8), <= 32
  int rows_per_block = 1;  // 1, 2 or 4: the power of two >= group * sq, capped at kDecodeMaxRowsPerBlock (1 with a score transform)
  int row_tiles = 1;       // ceil(group * sq / rows_per_block) blocks per kv head and split
  int keys_per_step = 1;   // kDecodeThreads / lanes_per_key * decode_unroll(rows_per_block)
};

// @pre 1 <= d, dv <= 256; group, sq >= 1. With score_transform (soft-cap or ALiBi) every row gets
// its own block: the transform's tanhf is a function call in AMD device code built without the
// device libraries, and several rows' registers kept live across those calls spill.
DecodeGeometry decode_geometry(int d, int dv, int group, int sq, bool score_transform = false);

// The full wave's split count (decode's plan for blocks of several rows; decode/plan=full) for a device
// with `multiprocessors` SMs (<= 0: kDecodeNominalSMs): as many splits as one wave of blocks holds — one batch element's blocks (hkv * row_tiles * splits) at most
// decode_blocks_per_sm x the SMs, rounded down, since a few blocks past a full wave would run alone
// with too few loads in flight — never more than the key steps (ceil(sk / keys_per_step)), at least
// 1, and chosen so that every split gets the same whole number of key steps (the chunk of
// decode_chunk is then a multiple of keys_per_step and no split is empty). Independent of the batch
// size on purpose: the split count sets the order of the floating-point sums, and a batch element
// must come out bitwise equal to the same element run alone (the BatchInvariant property); a larger
// batch runs more waves of small blocks.
int decode_splits(const AttnProblem& p, int multiprocessors);

// decode's plan (registry.h's decode_default_splits): decode_fused_splits' count (half the resident
// blocks) where a block has one row (MHA, or a score transform), decode_splits' (one full wave) where
// it has several. Measured on an H100 (reports/data/h100-80gb-hbm3/2026-11-27-decode-plan-708f029/,
// decode/plan=half against the full wave): one-row blocks 1.00-1.09x faster at h32 d128 and d64,
// Sk 1k-32k, batches 1 and 8 (a one-row block keeps 16 KB of K/V in flight per step at d128: 2 per SM
// stream at the rate); 4-row blocks (GQA h32/8, h32/4: 4 KB per step) 0.72-0.98x at Sk 4k-16k, where
// fewer blocks leave too few bytes in flight. Independent of the batch, as both counts.
int decode_plan_splits(const AttnProblem& p, int multiprocessors);
// Whether decode's plan takes the half wave for p: its blocks have one row (decode_geometry).
bool decode_plan_half(const AttnProblem& p);

// decode/fused=on (variants.h) aims at half the resident blocks (2 per SM up to 2 rows per block):
// on an H100 (h32 d128, Sk 1k-32k, reports/data/h100-80gb-hbm3/2026-11-27-decode-splits-a796e02/) the
// best split count at batch 1 was 8 (256 blocks) and the best at batch 8 was 1 (256 blocks), both
// faster than a full wave of shorter blocks.
//
// Its split count: decode_splits for half the resident blocks (h32 d128 on 132 SMs: 8). Independent
// of the batch, as decode_splits.
int decode_fused_splits(const AttnProblem& p, int multiprocessors);
// Splits walked per block: each block takes this many consecutive splits of one (batch, kv head, row
// tile) in turn, computing and writing each split's partial exactly as a block of its own does, so
// the output does not depend on it and the batch may choose it (the split count, which fixes the
// order of the sums, may not). As many blocks per row tile as half the resident blocks hold for the
// whole batch (batch x hkv x row_tiles blocks per split), at least 1 and at most `splits`; each block
// walks ceil(splits / blocks) splits (the last may walk fewer).
// Example (132 SMs, h32 d128, 8 splits): batch 1 walks 1 (8 blocks per head), batch 8 walks 8 (one
// block per head, which also combines its row: no second kernel, no arrival counter).
// @pre splits >= 1.
int decode_walk(const AttnProblem& p, int splits, int multiprocessors);
// Blocks per row tile when each walks `walk` of `splits` splits: ceil(splits / walk).
constexpr int decode_walk_blocks(int splits, int walk) { return (splits + walk - 1) / walk; }
// The arrival counters of decode/fused=on when a row tile has more than one block: one per row tile
// of the batch (batch x hkv x row_tiles), 32 bits each, after the partials in the workspace.
constexpr long long decode_arrival_counters(int batch, int hkv, const DecodeGeometry& g) {
  return static_cast<long long>(batch) * hkv * g.row_tiles;
}

// decode/mma=on (variants.h; NVIDIA): the query rows of one kv head (group x sq, at most one
// tensor-core tile of kDecodeMaxRowsPerTensorTile rows) as the rows of an m16n8k16 tile, one block
// of kDecodeThreads threads per (batch, kv head, split) streaming K/V tiles of kDecodeMmaKeysPerTile
// keys through shared memory (src/decode_mma.cuh). It takes problems without soft-cap or ALiBi with
// group * sq <= 16 and d, dv <= kDecodeMmaMaxDim, whatever the strides (rows that are not aligned
// 16-byte chunks are loaded element by element into the same tiles); the others run decode's split
// kernel.
inline constexpr int kDecodeMaxRowsPerTensorTile = 16;
inline constexpr int kDecodeMmaMaxDim = 128;
inline constexpr int kDecodeMmaKeysPerTile = 64;
inline constexpr int kDecodeMmaBlocksPerSm = 2;        // its shared memory: 3 stages of 32 KB at d 128
inline constexpr int kDecodeMmaMinTilesPerSplit = 4;   // 256 keys: 128 KB of K/V per block at d 128
bool decode_mma_takes(int d, int dv, int group, int sq, bool score_transform);
// decode/mma=on's split count where it takes the problem (else decode_plan_splits'): one wave of
// kDecodeMmaBlocksPerSm blocks per SM for one batch element (hkv blocks per split), but no split
// shorter than kDecodeMmaMinTilesPerSplit key tiles (a block's fixed cost -- Q, the ring's fill, the
// merge -- against its streaming), each split a whole number of tiles; at least 1. Independent of the
// batch (BatchInvariant), as decode's. Example (132 SMs, h32/8 d128): Sk 1024 -> 4 splits (256 keys
// each: 32 blocks at batch 1, 256 at batch 8); Sk 4096 -> 16 (128 blocks at batch 1, 1024 at batch 8);
// Sk 32768 -> 32 (33 wanted: 16 tiles each give 32; 256 blocks at batch 1).
int decode_mma_splits(const AttnProblem& p, int multiprocessors);

// Keys per split for `splits` splits: ceil(sk / splits) rounded up to a multiple of keys_per_step
// when that still leaves no split empty (always so for decode_splits' counts), else ceil(sk / splits)
// itself (forced split counts in the tests keep their uneven split borders). At least 1.
int decode_chunk(int sk, int splits, int keys_per_step);

}  // namespace flashprobe::kernels
