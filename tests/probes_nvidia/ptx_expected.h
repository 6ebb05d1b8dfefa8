#pragma once
// The PTX ISA's fragment figures, encoded locally as formulas so the GPU tests can check the
// executors on their own (the engine's atom registry carries the same layouts as values).
// Notation: lane = thread in the warp, g = lane >> 2 ("groupID"), q = lane & 3
// ("threadID_in_group"), i = the element index within the lane's fragment (a_i, b_i, c_i).
// Sources: PTX ISA 8.x/9.0, "Matrix Fragments for mma.m16n8k8" / "mma.m16n8k16" / "mma.m16n8k32"
// (f16/bf16 and .s8 figures), "ldmatrix" (m8n8 .b16 figure), "wgmma.mma_async: Register
// fragments" (m64nNk16 accumulator D and A-in-registers figures).
#include "flashprobe/probes/nvidia/derive.h"

namespace flashprobe::nvidia::ptx {

struct RC {
  int row, col;
};

// mma.m16n8k16 .f16/.bf16: A 16x16, B 16x8, C/D 16x8.
inline RC m16n8k16_a(int lane, int i) { return {(lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane & 3) + (i & 1) + 8 * (i >> 2)}; }
inline RC m16n8k16_b(int lane, int i) { return {2 * (lane & 3) + (i & 1) + 8 * (i >> 1), lane >> 2}; }
// C/D of every m16n8 shape.
inline RC m16n8_c(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)}; }
// mma.m16n8k8 .f16: A 16x8, B 8x8.
inline RC m16n8k8_a(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)}; }
inline RC m16n8k8_b(int lane, int i) { return {2 * (lane & 3) + i, lane >> 2}; }
// mma.m16n8k32 .s8: A 16x32 (16 per lane), B 32x8 (8 per lane).
inline RC m16n8k32_a(int lane, int i) {
  return {(lane >> 2) + 8 * ((i >> 2) & 1), 4 * (lane & 3) + (i & 3) + 16 * (i >> 3)};
}
inline RC m16n8k32_b(int lane, int i) { return {4 * (lane & 3) + (i & 3) + 16 * (i >> 2), lane >> 2}; }

// ldmatrix .m8n8 .b16, register j, half h (slot 2j + h): row = the address row, stacked as
// 8j + (row within matrix j). Without .trans lane holds row g of matrix j, columns 2q + h; with
// .trans it holds the transposed element: row 2q + h, column g.
inline RC ldmatrix(bool trans, int lane, int slot) {
  const int j = slot >> 1, h = slot & 1;
  if (!trans) return {8 * j + (lane >> 2), 2 * (lane & 3) + h};
  return {8 * j + 2 * (lane & 3) + h, lane >> 2};
}

// wgmma m64nNk16: thread t of the warpgroup, warp w = t / 32 owns rows 16w..16w+15; within a warp
// each 8-column block repeats the m16n8 accumulator pattern. A in registers: per warp the
// mma.m16n8k16 A pattern on its 16 rows.
inline RC wgmma_d(int t, int i) {
  const int lane = t & 31;
  return {16 * (t >> 5) + (lane >> 2) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane & 3) + (i & 1)};
}
inline RC wgmma_a(int t, int i) {
  const RC r = m16n8k16_a(t & 31, i);
  return {16 * (t >> 5) + r.row, r.col};
}

}  // namespace flashprobe::nvidia::ptx
