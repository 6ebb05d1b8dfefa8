#pragma once
// Register layouts of the AMD matrix instructions the kernels use (documents cited in
// amd_matrix.cuh). Documented, simulated and compiled — not measured on AMD hardware.
#include "flashprobe/atoms/layouts.h"

namespace flashprobe::atoms {

// gfx11 WMMA wave32 16x16x16: A/B lanes 16-31 replicate lanes 0-15; C row 2*i + lane/16.
struct GFX11_WMMA_16x16x16_Layout {
  static constexpr int M = 16, N = 16, K = 16, kWave = 32;
  static constexpr int kA = 16, kB = 16, kC = 8;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % 16, i}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {i, lane % 16}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) { return {2 * i + lane / 16, lane % 16}; }
};

// gfx12 WMMA wave32 16x16x16: no replication; k = i + 8*(lane/16); C row i + 8*(lane/16).
struct GFX12_WMMA_16x16x16_Layout {
  static constexpr int M = 16, N = 16, K = 16, kWave = 32;
  static constexpr int kA = 8, kB = 8, kC = 8;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % 16, i + 8 * (lane / 16)}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {i + 8 * (lane / 16), lane % 16}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) { return {i + 8 * (lane / 16), lane % 16}; }
};

// CDNA MFMA wave64 32x32x8: A/B k = 4*(lane/32) + i; C row 8*(i/4) + 4*(lane/32) + i%4.
struct CDNA_MFMA_32x32x8_Layout {
  static constexpr int M = 32, N = 32, K = 8, kWave = 64;
  static constexpr int kA = 4, kB = 4, kC = 16;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) { return {lane % 32, 4 * (lane / 32) + i}; }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {4 * (lane / 32) + i, lane % 32}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) { return {8 * (i / 4) + 4 * (lane / 32) + i % 4, lane % 32}; }
};

}  // namespace flashprobe::atoms
