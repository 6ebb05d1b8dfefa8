// A kernel whose only job is to show whether an emulator honours a gfx12 WMMA whose C operand is an
// inline constant. clang-19 encodes a zero accumulator as the inline constant 0 in SRC2 on gfx12 (the
// mma kernel's first S = Q K^T of every key tile does), which RDNA3 does not allow; an emulator that
// always reads C from VGPRs reads v128.. (operand 128 is the inline constant 0) and adds whatever
// those registers hold. Here v128 + i holds i + 1 (f32) when the WMMA runs, A and B are all ones
// (f16), so on AMD hardware D = A*B = 16 in every slot; D = 16 + (i + 1) in slot i means C was read
// from v128 + i. The emulator harness runs it (emulator/amdemu/defects.py); the build checks that the
// WMMA's C is the inline constant 0 (emulator/CMakeLists.txt).
#include <cstdint>

#include "flashprobe/atoms/amd_matrix.cuh"

extern "C" __global__ void __launch_bounds__(32) wmma_inline_c(float* out, const std::uint32_t* ab) {
  using Atom = flashprobe::atoms::GFX12_WMMA_16x16x16_F32F16_W32;
  asm volatile(
      "v_mov_b32 v128, 1.0\n v_mov_b32 v129, 2.0\n v_mov_b32 v130, 0x40400000\n v_mov_b32 v131, 4.0\n"
      " v_mov_b32 v132, 0x40a00000\n v_mov_b32 v133, 0x40c00000\n v_mov_b32 v134, 0x40e00000\n"
      " v_mov_b32 v135, 0x41000000" ::: "v128", "v129", "v130", "v131", "v132", "v133", "v134", "v135");
  const int lane = static_cast<int>(threadIdx.x);
  std::uint32_t a[Atom::kARegs], b[Atom::kBRegs];
  for (int i = 0; i < Atom::kARegs; ++i) a[i] = ab[lane * Atom::kARegs + i];
  for (int i = 0; i < Atom::kBRegs; ++i) b[i] = ab[32 * Atom::kARegs + lane * Atom::kBRegs + i];
  float d[Atom::kDRegs] = {};
  Atom::mma(d, a, b);
  for (int i = 0; i < Atom::kDRegs; ++i) out[lane * Atom::kDRegs + i] = d[i];
}
