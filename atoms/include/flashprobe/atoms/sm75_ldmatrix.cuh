#pragma once
// Raw ldmatrix wrappers (sm_75+): the instructions the H100 load-path probe runs (probes/nvidia,
// records under reports/data/) and the mma kernel loads its B fragments with; their layout, for the
// kernel's compile-time derivations, is sm75_ldmatrix.h. Named as in CuTe: U32xN_LDSM_N loads N 8x8 b16 matrices, one
// 32-bit register per matrix per thread; U16x(2N)_LDSM_T is the same with .trans. Each thread
// passes one shared-memory row address (threads 8i..8i+7 address the rows of matrix i).
//
//   std::uint32_t r[4];
//   SM75_U32x4_LDSM_N::copy(smem_row_address, r);
#include <cstdint>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/core/device.cuh"


namespace flashprobe::nvidia {

FP_DEV std::uint32_t smem_address(const void* p) {
#if defined(FP_CAP_PTX)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

#if defined(FP_CAP_LDMATRIX)
#define FP_LDSM(INSTR, ...) asm volatile(INSTR : __VA_ARGS__)
#else
#define FP_LDSM(INSTR, ...) fp_dev::trap()
#endif

struct SM75_U32x1_LDSM_N {
  static constexpr int kMatrices = 1;
  FP_DEV static void copy(const void* row, std::uint32_t (&r)[1]) {
    FP_LDSM("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n", "=r"(r[0]) : "r"(smem_address(row)));
  }
};
struct SM75_U32x2_LDSM_N {
  static constexpr int kMatrices = 2;
  FP_DEV static void copy(const void* row, std::uint32_t (&r)[2]) {
    FP_LDSM("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n", "=r"(r[0]), "=r"(r[1])
            : "r"(smem_address(row)));
  }
};
struct SM75_U32x4_LDSM_N {
  static constexpr int kMatrices = 4;
  FP_DEV static void copy(const void* row, std::uint32_t (&r)[4]) {
    FP_LDSM("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n", "=r"(r[0]), "=r"(r[1]),
            "=r"(r[2]), "=r"(r[3])
            : "r"(smem_address(row)));
  }
};
struct SM75_U16x2_LDSM_T {
  static constexpr int kMatrices = 1;
  FP_DEV static void copy(const void* row, std::uint32_t (&r)[1]) {
    FP_LDSM("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n", "=r"(r[0]) : "r"(smem_address(row)));
  }
};
struct SM75_U16x4_LDSM_T {
  static constexpr int kMatrices = 2;
  FP_DEV static void copy(const void* row, std::uint32_t (&r)[2]) {
    FP_LDSM("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n", "=r"(r[0]), "=r"(r[1])
            : "r"(smem_address(row)));
  }
};
struct SM75_U16x8_LDSM_T {
  static constexpr int kMatrices = 4;
  FP_DEV static void copy(const void* row, std::uint32_t (&r)[4]) {
    FP_LDSM("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n", "=r"(r[0]), "=r"(r[1]),
            "=r"(r[2]), "=r"(r[3])
            : "r"(smem_address(row)));
  }
};

#undef FP_LDSM

}  // namespace flashprobe::nvidia
