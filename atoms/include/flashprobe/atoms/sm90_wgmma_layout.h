#pragma once
// The register layout of wgmma.mma_async m64nNk16 (f16 and bf16 inputs, f32 accumulators), PTX ISA
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate: Register Fragments". A warpgroup of 128
// threads; warp w = lane >> 5 owns rows 16w..16w+15, and inside a warp the pattern is mma.sync
// m16n8k16's, built here from SM80_16x8x16_Layout rather than spelled again:
//   A (64x16, registers, the RS form): a_i = the m16n8k16 a_i of lane & 31, 16w rows down
//   C (64xN): c_i = the m16n8 c_(i&3) of lane & 31, 16w rows down and 8*(i>>2) columns right
// B is a shared-memory operand read through a matrix descriptor: it has no register layout. b()
// states the probe executor's staging order (slot e = lane * N/8 + slot holds B[e % 16][e / 16]) so
// that the whole atom compares with the registry. The H100 probe derived these tables
// (reports/data/h100-80gb-hbm3/); tests/atoms checks them against the registry.
#include "flashprobe/atoms/layouts.h"
#include "flashprobe/atoms/sm80_layout.h"

namespace flashprobe::atoms {

template <int kN>
struct SM90_64xNx16_Layout {
  static_assert(kN % 8 == 0 && kN >= 8 && kN <= 256, "wgmma m64nNk16: N is a multiple of 8 in [8, 256]");
  static constexpr int M = 64, N = kN, K = 16, kWave = 128;
  static constexpr int kA = 8, kB = kN / 8, kC = kN / 2;
  FP_ATOM_HD static constexpr Coord a(int lane, int i) {
    const Coord w = SM80_16x8x16_Layout::a(lane & 31, i);
    return {16 * (lane >> 5) + w.row, w.col};
  }
  FP_ATOM_HD static constexpr Coord b(int lane, int i) {
    const int e = lane * (kN / 8) + i;
    return {e % 16, e / 16};
  }
  FP_ATOM_HD static constexpr Coord c(int lane, int i) {
    const Coord w = SM80_16x8x16_Layout::c(lane & 31, i & 3);
    return {16 * (lane >> 5) + w.row, 8 * (i >> 2) + w.col};
  }
};

}  // namespace flashprobe::atoms
