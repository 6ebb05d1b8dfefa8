#pragma once
// NVIDIA mma.sync (sm_80 and later) as atoms: m16n8k16 with f16 and bf16 inputs (the mma kernel's),
// m16n8k8 f16 and m16n8k32 s8 (probed only), f32 / s32 accumulators; d += a * b. The layouts are
// sm80_layout.h's; the probe executors (probes/nvidia/mma_sync_kernels.cu) run these same mma()
// functions, so the H100 probe recorded under reports/data/ checks the instruction the kernel issues.
// The bf16 atom reuses the f16 layout: only the instruction's type suffix differs. Registers: slot s
// in register s / 2 (16-bit inputs, low half first) or s / 4 (s8, lowest byte first).
#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/atoms/caps.h"
#include "flashprobe/atoms/sm80_layout.h"

namespace flashprobe::atoms {


struct SM80_16x8x16_F32F16F16F32_TN : SM80_16x8x16_Layout {
  static constexpr const char* kName = "SM80_16x8x16_F32F16F16F32_TN";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(FP_CAP_SM80)
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
#if defined(FP_CAP_SM80)
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

struct SM80_16x8x8_F32F16F16F32_TN : SM80_16x8x8_Layout {
  static constexpr const char* kName = "SM80_16x8x8_F32F16F16F32_TN";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[1]) {
#if defined(FP_CAP_SM80)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};
struct SM80_16x8x32_S32S8S8S32_TN : SM80_16x8x32_S8_Layout {
  static constexpr const char* kName = "SM80_16x8x32_S32S8S8S32_TN";
  FP_DEV static void mma(std::int32_t (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(FP_CAP_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};
}  // namespace flashprobe::atoms
