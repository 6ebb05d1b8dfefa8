#pragma once
// NVIDIA mma.sync m16n8k16 (sm_80 and later) as kernel-facing atoms: f16 and bf16 inputs, f32
// accumulators. The layouts are those of the PTX ISA ("Matrix Fragments for mma.m16n8k16 with
// floating point type"), with groupID = lane >> 2 and threadID_in_group = lane % 4:
//   A (16x16, row): a_i at row groupID + 8*((i>>1)&1),  col 2*tid + (i&1) + 8*(i>>2)
//   B (16x8,  col): b_i at row 2*tid + (i&1) + 8*(i>>1), col groupID
//   C (16x8):       c_i at row groupID + 8*(i>>1),        col 2*tid + (i&1)
// and the H100 probe recorded under reports/data/ derives the same tables (checked by a CPU test).
// The bf16 atom reuses the f16 layout: only the instruction's type suffix differs.
#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/atoms/sm80_layout.h"

namespace flashprobe::atoms {


struct SM80_16x8x16_F32F16F16F32_TN : SM80_16x8x16_Layout {
  static constexpr const char* kName = "SM80_16x8x16_F32F16F16F32_TN";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(FP_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();  // wrong target: the dispatcher never sends this atom below sm_80 or to AMD
#endif
  }
};

struct SM80_16x8x16_F32BF16BF16F32_TN : SM80_16x8x16_Layout {
  static constexpr const char* kName = "SM80_16x8x16_F32BF16BF16F32_TN";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(FP_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

}  // namespace flashprobe::atoms
