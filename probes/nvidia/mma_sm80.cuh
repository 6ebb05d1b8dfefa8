#pragma once
// Raw mma.sync wrappers (sm_80+), CuTe style: register array types plus one fma() holding the PTX.
// Register order is the PTX ISA's (a0,a1 in the first .f16x2 register, low half first), so a
// probe's slot i is element i of the ISA's fragment figure. TN = A row-major, B column-major,
// the only form these shapes have.
//
//   SM80_16x8x16_F32F16F16F32_TN::fma(d, a, b, c);   // d, c: float[4]; a: uint32[4]; b: uint32[2]
//
// Compiled below sm_80 (never, in this build: CMAKE_CUDA_ARCHITECTURES is 80;90) the body traps,
// so a wrong-arch call fails loudly instead of returning garbage.
#include <cstdint>

#include "flashprobe/core/device.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FP_SM80_MMA_ENABLED 1
#endif

namespace flashprobe::nvidia {

struct SM80_16x8x16_F32F16F16F32_TN {
  using DRegs = float[4];
  using ARegs = std::uint32_t[4];
  using BRegs = std::uint32_t[2];
  using CRegs = float[4];
  FP_DEV static void fma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                         const float (&c)[4]) {
#if defined(FP_SM80_MMA_ENABLED)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
#else
    fp_dev::trap();
#endif
  }
};

struct SM80_16x8x16_F32BF16BF16F32_TN {
  using DRegs = float[4];
  using ARegs = std::uint32_t[4];
  using BRegs = std::uint32_t[2];
  using CRegs = float[4];
  FP_DEV static void fma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                         const float (&c)[4]) {
#if defined(FP_SM80_MMA_ENABLED)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
#else
    fp_dev::trap();
#endif
  }
};

struct SM80_16x8x8_F32F16F16F32_TN {
  using DRegs = float[4];
  using ARegs = std::uint32_t[2];
  using BRegs = std::uint32_t[1];
  using CRegs = float[4];
  FP_DEV static void fma(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[1],
                         const float (&c)[4]) {
#if defined(FP_SM80_MMA_ENABLED)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
    fp_dev::trap();
#endif
  }
};

// Four s8 per 32-bit register, a0 in the lowest byte.
struct SM80_16x8x32_S32S8S8S32_TN {
  using DRegs = std::int32_t[4];
  using ARegs = std::uint32_t[4];
  using BRegs = std::uint32_t[2];
  using CRegs = std::int32_t[4];
  FP_DEV static void fma(std::int32_t (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                         const std::int32_t (&c)[4]) {
#if defined(FP_SM80_MMA_ENABLED)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
#else
    fp_dev::trap();
#endif
  }
};

}  // namespace flashprobe::nvidia
