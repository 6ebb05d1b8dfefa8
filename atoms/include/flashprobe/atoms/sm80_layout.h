#pragma once
// The register layouts of mma.sync m16n8k{16,8,32} (sm_80 and later), PTX ISA "Matrix Fragments for
// mma.m16n8k16 with floating point type", "... mma.m16n8k8", "... mma.m16n8k32" (.s8/.u8), with
// groupID g = lane >> 2 and threadID_in_group t = lane % 4; the mma() wrappers are in sm80_mma.cuh.
// These functions are the only spelling of these layouts in the tree: the probe registry
// (probes/src/expected_nvidia.cpp), the GPU probe tests and the kernels read them, and the H100 probe
// recorded under reports/data/ derived the same tables (tests/atoms/test_atoms_match_registry.cpp).
#include "flashprobe/atoms/layouts.h"

namespace flashprobe::atoms {

// C/D of every m16n8 shape: c_i at row g + 8*(i>>1), col 2t + (i&1).
struct SM80_16x8_CLayout {
  FP_ATOM_HD static constexpr Coord c(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)}; }
};

// m16n8k16, f16 and bf16 inputs: a_i at row g + 8*((i>>1)&1), col 2t + (i&1) + 8*(i>>2);
// b_i at row 2t + (i&1) + 8*(i>>1), col g.
struct SM80_16x8x16_Layout : SM80_16x8_CLayout {
  static constexpr int M = 16, N = 8, K = 16, kWave = 32;
  static constexpr int kA = 8, kB = 4, kC = 4;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) {
    return {(lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane & 3) + (i & 1) + 8 * (i >> 2)};
  }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {2 * (lane & 3) + (i & 1) + 8 * (i >> 1), lane >> 2}; }
};

// m16n8k8, f16 inputs: a_i at row g + 8*(i>>1), col 2t + (i&1); b_i at row 2t + i, col g.
struct SM80_16x8x8_Layout : SM80_16x8_CLayout {
  static constexpr int M = 16, N = 8, K = 8, kWave = 32;
  static constexpr int kA = 4, kB = 2, kC = 4;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {2 * (lane & 3) + i, lane >> 2}; }
};

// m16n8k32, s8 inputs (four per 32-bit register): a_i at row g + 8*((i>>2)&1),
// col 4t + (i&3) + 16*(i>>3); b_i at row 4t + (i&3) + 16*(i>>2), col g.
struct SM80_16x8x32_S8_Layout : SM80_16x8_CLayout {
  static constexpr int M = 16, N = 8, K = 32, kWave = 32;
  static constexpr int kA = 16, kB = 8, kC = 4;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) {
    return {(lane >> 2) + 8 * ((i >> 2) & 1), 4 * (lane & 3) + (i & 3) + 16 * (i >> 3)};
  }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {4 * (lane & 3) + (i & 3) + 16 * (i >> 2), lane >> 2}; }
};

}  // namespace flashprobe::atoms
