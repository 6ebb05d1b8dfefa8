// Compiled by clang-19 for gfx1100, gfx1201, gfx942 and gfx90a (cmake/AmdDeviceCode.cmake): every
// instantiation the AMD launcher ships (mma_amd.cu: each head dim, f16 and bf16, the atom of each
// target family, the launcher's tile), so the machine-code check can assert the matrix instructions
// are emitted and the resource records (VGPRs, LDS, scratch, occupancy) cover every one.
#include "flashprobe/atoms/amd_matrix.cuh"
#include "src/mma/mma_amd_plan.h"
#include "src/mma/mma_launch.cuh"

namespace flashprobe::kernels::dev {

// The emulator harness launches by mma_amd_plan.h's numbers: they must be the launcher's.
template <class Atom, int D>
constexpr bool plan_is_the_launchers() {
  static_assert(detail::mma_bn<Atom, D, true>() == amd_mma_bn(D));
  static_assert(detail::kMmaWaves == kAmdMmaWaves);
  static_assert(mma_default_mt<Atom, D>() == 1);
  return true;
}

#define FP_AMD_MMA_CHECK(AF16, ABF16, D)                                                                        \
  static_assert(plan_is_the_launchers<atoms::AF16, D>() && plan_is_the_launchers<atoms::ABF16, D>());         \
  template __global__ void mma_fwd<atoms::AF16, F16, D, detail::kMmaWaves, detail::mma_bn<atoms::AF16, D, true>(), \
                                   mma_default_mt<atoms::AF16, D>(), true>(Params, MmaOrder, float);           \
  template __global__ void mma_fwd<atoms::ABF16, BF16, D, detail::kMmaWaves, detail::mma_bn<atoms::ABF16, D, true>(), \
                                   mma_default_mt<atoms::ABF16, D>(), true>(Params, MmaOrder, float);

#if defined(FP_AMD_GFX11_WMMA)
#define FP_WMMA_ALL(D) FP_AMD_MMA_CHECK(GFX11_WMMA_16x16x16_F32F16_W32, GFX11_WMMA_16x16x16_F32BF16_W32, D)
FP_WMMA_ALL(64) FP_WMMA_ALL(80) FP_WMMA_ALL(96) FP_WMMA_ALL(128) FP_WMMA_ALL(256)
#elif defined(FP_AMD_GFX12_WMMA)
#define FP_WMMA_ALL(D) FP_AMD_MMA_CHECK(GFX12_WMMA_16x16x16_F32F16_W32, GFX12_WMMA_16x16x16_F32BF16_W32, D)
FP_WMMA_ALL(64) FP_WMMA_ALL(80) FP_WMMA_ALL(96) FP_WMMA_ALL(128) FP_WMMA_ALL(256)
#elif defined(FP_AMD_MFMA_BF16_1K)
// MFMA 32x32x8: d % 32 == 0 (the launcher refuses d = 80).
#define FP_MFMA_ALL(D) FP_AMD_MMA_CHECK(CDNA_MFMA_32x32x8_F32F16, CDNA_MFMA_32x32x8_F32BF16_1K, D)
FP_MFMA_ALL(64) FP_MFMA_ALL(96) FP_MFMA_ALL(128) FP_MFMA_ALL(256)
#endif
}  // namespace flashprobe::kernels::dev
