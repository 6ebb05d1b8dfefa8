#pragma once
// Shared memory per block of the tensor-core backward (host code, every build): the registry's
// supports() refuses a device whose opt-in limit per block is smaller, with the numbers, instead of
// a launch that fails. mma_bwd_smem_check.cu asserts at compile time that these are the kernels' own
// counts (MmaBwdConfig and MmaBwdDqConfig::kSmemBytes, mma_bwd.cuh) for every shape, mode and head
// dim built, so that the two cannot drift apart.
#include "src/mma/mma_bwd_fa2_plan.h"
#include "src/mma/mma_bwd_registry.h"

namespace flashprobe::kernels {

// Keys per block of the dK/dV kernel (16 per warp) and its dS tiles in shared memory.
constexpr int mma_bwd_block_keys(MmaBwdShapeId s) { return s == MmaBwdShapeId::shipped ? 64 : 128; }
constexpr int mma_bwd_ds_tiles(MmaBwdShapeId s, bool deterministic) {
  return s == MmaBwdShapeId::shipped ? 1 : (deterministic ? 0 : 2);
}
// The fp32 dQ staging tiles of the bulk reduction (k128_bulk) and their row length in floats.
constexpr int mma_bwd_dq_tiles(MmaBwdShapeId s) { return s == MmaBwdShapeId::k128_bulk ? 2 : 0; }
constexpr int mma_bwd_dq_staging_ld(int d) { return d + 8; }
// The one head dim mma_bwd_k128_bulk is built for (at 128 its staging tiles would not fit).
inline constexpr int kMmaBwdBulkDim = 64;
inline constexpr int kMmaBwdSmemRows = 64;    // query rows per step of the dK/dV kernel, per block of mma_bwd_dq
inline constexpr int kMmaBwdSmemDqKeys = 64;  // keys per tile of mma_bwd_dq

// The dK/dV kernel: K and V (keys rows of d + 8 halves), two stages of Q and dO (rows of d + 8),
// the dS tiles (rows of keys + 8 halves), two stages of LSE and D (floats), the dQ staging tiles
// (rows of d + 8 floats).
constexpr int mma_bwd_dkdv_smem_bytes(int d, int keys, int rows, int ds_tiles, int dq_tiles) {
  return 2 * (2 * keys * (d + 8) + 4 * rows * (d + 8) + ds_tiles * rows * (keys + 8)) + 4 * 2 * 2 * rows +
         4 * dq_tiles * rows * mma_bwd_dq_staging_ld(d);
}
// The deterministic dQ kernel: Q and dO (rows of d + 8 halves), two stages of K and V.
constexpr int mma_bwd_dq_smem_bytes(int d, int rows, int keys) { return 2 * (2 * rows * (d + 8) + 4 * keys * (d + 8)); }

// The largest block one backward of this shape launches at head dim d (the deterministic mode also
// launches mma_bwd_dq); the fa2 shape's dK/dV block is MmaBwdFa2Plan's (both modes).
constexpr int mma_bwd_smem_bytes(MmaBwdShapeId s, bool deterministic, int d) {
  const int dkdv = mma_bwd_is_fa2(s) ? (d == 64 ? MmaBwdFa2Plan<64>::kSmemBytes : MmaBwdFa2Plan<128>::kSmemBytes)
                                           : mma_bwd_dkdv_smem_bytes(d, mma_bwd_block_keys(s), kMmaBwdSmemRows, mma_bwd_ds_tiles(s, deterministic),
                                           mma_bwd_dq_tiles(s));
  const int dq = deterministic ? mma_bwd_dq_smem_bytes(d, kMmaBwdSmemRows, kMmaBwdSmemDqKeys) : 0;
  return dkdv > dq ? dkdv : dq;
}

}  // namespace flashprobe::kernels
