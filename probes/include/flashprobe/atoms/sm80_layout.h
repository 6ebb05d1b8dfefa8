#pragma once
// The register layout of mma.sync m16n8k16 (f16 and bf16 inputs, f32 accumulators), PTX ISA
// "Matrix Fragments for mma.m16n8k16 with floating point type"; see sm80_mma.cuh.
#include "flashprobe/atoms/layouts.h"

namespace flashprobe::atoms {

struct SM80_16x8x16_Layout {
  static constexpr int M = 16, N = 8, K = 16, kWave = 32;
  static constexpr int kA = 8, kB = 4, kC = 4;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) {
    return {(lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane & 3) + (i & 1) + 8 * (i >> 2)};
  }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) { return {2 * (lane & 3) + (i & 1) + 8 * (i >> 1), lane >> 2}; }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)}; }
};

}  // namespace flashprobe::atoms
