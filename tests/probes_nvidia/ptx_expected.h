#pragma once
// What the GPU tests of the NVIDIA executors expect each probe to find: the atom module's layouts
// (flashprobe/atoms/sm80_layout.h, sm90_wgmma_layout.h, sm75_ldmatrix.h), the one spelling of the
// PTX ISA's fragment figures in the tree, adapted to the (lane, slot) -> RC signature the tests use.
// Notation: lane = thread in the warp (warpgroup for wgmma), slot = the element index within the
// lane's fragment (a_i, b_i, c_i).
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/atoms/sm80_layout.h"
#include "flashprobe/atoms/sm90_wgmma_layout.h"
#include "flashprobe/probes/nvidia/derive.h"

namespace flashprobe::nvidia::ptx {

struct RC {
  int row, col;
};
inline RC rc(atoms::Coord c) { return {c.row, c.col}; }

// mma.m16n8k16 .f16/.bf16: A 16x16, B 16x8, C/D 16x8.
inline RC m16n8k16_a(int lane, int i) { return rc(atoms::SM80_16x8x16_Layout::a(lane, i)); }
inline RC m16n8k16_b(int lane, int i) { return rc(atoms::SM80_16x8x16_Layout::b(lane, i)); }
// C/D of every m16n8 shape.
inline RC m16n8_c(int lane, int i) { return rc(atoms::SM80_16x8_CLayout::c(lane, i)); }
// mma.m16n8k8 .f16: A 16x8, B 8x8.
inline RC m16n8k8_a(int lane, int i) { return rc(atoms::SM80_16x8x8_Layout::a(lane, i)); }
inline RC m16n8k8_b(int lane, int i) { return rc(atoms::SM80_16x8x8_Layout::b(lane, i)); }
// mma.m16n8k32 .s8: A 16x32 (16 per lane), B 32x8 (8 per lane).
inline RC m16n8k32_a(int lane, int i) { return rc(atoms::SM80_16x8x32_S8_Layout::a(lane, i)); }
inline RC m16n8k32_b(int lane, int i) { return rc(atoms::SM80_16x8x32_S8_Layout::b(lane, i)); }

// ldmatrix .m8n8 .b16, register j, half h (slot 2j + h), rows of the loaded stack of four matrices.
inline RC ldmatrix(bool trans, int lane, int slot) {
  return rc(trans ? atoms::SM75_LDMATRIX_X4_Layout<true>::at(lane, slot)
                  : atoms::SM75_LDMATRIX_X4_Layout<false>::at(lane, slot));
}

// wgmma m64nNk16 (any N: the accumulator pattern repeats every 8 columns), thread t of the
// warpgroup: accumulator D and A in registers.
inline RC wgmma_d(int t, int i) { return rc(atoms::SM90_64xNx16_Layout<256>::c(t, i)); }
inline RC wgmma_a(int t, int i) { return rc(atoms::SM90_64xNx16_Layout<256>::a(t, i)); }

}  // namespace flashprobe::nvidia::ptx
