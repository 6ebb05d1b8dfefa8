#pragma once
// Register layouts of the AMD matrix instructions (documents cited in amd_matrix.cuh), the only
// spelling of them in the tree: the probe registry (probes/src/expected_{rdna3,rdna4,cdna}.cpp), the
// probe executors and the mma kernel read these. Documented, simulated and compiled — not measured
// on AMD hardware. The instructions and the targets they run on: amd_matrix.cuh, targets.h.
#include "flashprobe/atoms/layouts.h"

namespace flashprobe::atoms {

// gfx11 (RDNA3) WMMA 16x16x16: every lane of a group of 16 holds one row of A (one column of B) with
// K in its 16 slots, and every other group of 16 lanes holds a copy (wave32: lanes 16-31 replicate
// 0-15; wave64: 16-63 replicate 0-15). The f32 accumulator interleaves rows between the G = wave/16
// lane groups: row G*slot + lane/16. kOpsel >= 0: the 16-bit accumulator forms, one element per
// VGPR in the half OPSEL selects (slot = 2*vgpr + opsel); the other slots are ignored.
template <int kWave_, int kOpsel = -1>
struct GFX11_WMMA_Layout {
  static_assert(kWave_ == 32 || kWave_ == 64);
  static constexpr int M = 16, N = 16, K = 16, kWave = kWave_;
  static constexpr int kVgprs = 256 / kWave;  // C/D registers: 8 in wave32, 4 in wave64
  static constexpr int kA = 16, kB = 16, kC = kOpsel < 0 ? kVgprs : 2 * kVgprs;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % 16, i}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {i, lane % 16}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) {
    if constexpr (kOpsel < 0) {
      return {(kWave / 16) * i + lane / 16, lane % 16};
    } else {
      if ((i & 1) != kOpsel) return kIgnoredSlot;
      return {(kWave / 16) * (i >> 1) + lane / 16, lane % 16};
    }
  }
};
using GFX11_WMMA_16x16x16_Layout = GFX11_WMMA_Layout<32>;

// gfx12 (RDNA4) WMMA 16x16x16, f32 accumulators: no replication. K is split between the lane groups
// of 16 in runs of four: k = 8*(i/4) + 4*(lane/16) + i%4 (wave32: lane 0 holds k 0-3 and 8-11, lane 16
// k 4-7 and 12-15; wave64, 4 slots: lane group g holds k 4g..4g+3), as the RDNA4 ISA guide's VGPR
// tables and AMD's Matrix Instruction Calculator state. D = A*B cannot
// tell this k order from any other that A and B share; the probe records say so. The rows of C are
// split too (wave32: row i + 8*(lane/16); wave64: i + 8*((lane/16) & 1) + 4*(lane/32)).
template <int kWave_>
struct GFX12_WMMA_Layout {
  static_assert(kWave_ == 32 || kWave_ == 64);
  static constexpr int M = 16, N = 16, K = 16, kWave = kWave_;
  static constexpr int kA = 256 / kWave, kB = kA, kC = 256 / kWave;
  FP_ATOM_HD static constexpr int k_of(int lane, int i) { return 8 * (i / 4) + 4 * (lane / 16) + i % 4; }
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % 16, k_of(lane, i)}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {k_of(lane, i), lane % 16}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) {
    if constexpr (kWave == 32) return {i + 8 * (lane / 16), lane % 16};
    else return {i + 8 * ((lane / 16) & 1) + 4 * (lane / 32), lane % 16};
  }
};
using GFX12_WMMA_16x16x16_Layout = GFX12_WMMA_Layout<32>;

// gfx12 (RDNA4) WMMA 16x16x16 with 8-bit A and B (v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}), f32
// accumulators as GFX12_WMMA_Layout. The k order differs from the 16-bit forms': a lane's k run is
// its whole 8 bytes (wave32: k = 8*(lane/16) + i, lane 0 holds k 0-7, lane 16 k 8-15), and in wave64
// (4 slots) lane groups 0-3 hold k 0-3, 8-11, 4-7, 12-15: k = 8*((lane/16) & 1) + 4*(lane/32) + i.
// As the RDNA4 ISA guide's 8-bit VGPR tables and AMD's Matrix Instruction Calculator state it (the
// absolute k order is documented, not observable from D = A*B).
template <int kWave_>
struct GFX12_WMMA_8bit_Layout : GFX12_WMMA_Layout<kWave_> {
  using Base = GFX12_WMMA_Layout<kWave_>;
  using Base::kWave;
  FP_ATOM_HD static constexpr int k_of(int lane, int i) {
    if constexpr (kWave == 32) return 8 * (lane / 16) + i;
    else return 8 * ((lane / 16) & 1) + 4 * (lane / 32) + i;
  }
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % 16, k_of(lane, i)}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {k_of(lane, i), lane % 16}; }
};

// CDNA MFMA (wave64) kDim x kDim x kK: A lane l holds row l % kDim (B: column), with K split between
// the 64/kDim lane groups, k = kA*(l / kDim) + i. Accumulators:
//   32x32: row 8*(i/4) + 4*(lane/32) + i%4, col lane % 32 (16 slots)
//   16x16: row i + 4*(lane/16), col lane % 16 (4 slots)
template <int kDim, int kK>
struct CDNA_MFMA_Layout {
  static_assert(kDim == 16 || kDim == 32);
  static constexpr int M = kDim, N = kDim, K = kK, kWave = 64;
  static constexpr int kA = kK * kDim / 64, kB = kA, kC = kDim * kDim / 64;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % kDim, kA * (lane / kDim) + i}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {kB * (lane / kDim) + i, lane % kDim}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) {
    if constexpr (kDim == 32) return {8 * (i / 4) + 4 * (lane / 32) + i % 4, lane % 32};
    else return {i + 4 * (lane / 16), lane % 16};
  }
};
using CDNA_MFMA_32x32x8_Layout = CDNA_MFMA_Layout<32, 8>;

}  // namespace flashprobe::atoms
