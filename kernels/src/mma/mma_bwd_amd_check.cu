// Compiled by clang-19 for gfx1100, gfx1201, gfx942 and gfx90a (cmake/AmdDeviceCode.cmake): every
// kernel the AMD backward launcher ships (mma_bwd_amd.cu: the row term, and dK/dV and dQ for each
// head dim, f16 and bf16, the atom of each target family), so that the machine-code check can assert
// the matrix instructions are emitted, and the emulator harness can run them (CODE_OBJECT).
#include "flashprobe/atoms/amd_matrix.cuh"
#include "src/mma/mma_bwd_amd.cuh"
#include "src/mma/mma_bwd_amd_plan.h"

namespace flashprobe::kernels::dev {

// The emulator harness launches by mma_bwd_amd_plan.h's numbers: they must be the kernels'.
template <class Atom, int D>
constexpr bool plan_is_the_kernels() {
  using C = AmdBwdConfig<Atom, D, amd_bwd_tile(D)>;
  static_assert(C::kBc == kAmdBwdBlock && C::kThreads == kAmdBwdBlock / Atom::M * Atom::kWave);
  static_assert(kBwdThreads == kAmdBwdRowdotThreads);
  return true;
}

template __global__ void bwd_rowdot<Bug::none>(BwdParams);

#define FP_AMD_BWD_ONE(A, E, D)                                                     \
  static_assert(plan_is_the_kernels<atoms::A, D>());                                \
  template __global__ void amd_bwd_dkdv<atoms::A, E, D, amd_bwd_tile(D)>(BwdParams); \
  template __global__ void amd_bwd_dq<atoms::A, E, D, amd_bwd_tile(D)>(BwdParams);
#define FP_AMD_BWD_CHECK(AF16, ABF16, D) FP_AMD_BWD_ONE(AF16, F16, D) FP_AMD_BWD_ONE(ABF16, BF16, D)

#if defined(FP_AMD_GFX11_WMMA)
FP_AMD_BWD_CHECK(GFX11_WMMA_16x16x16_F32F16_W32, GFX11_WMMA_16x16x16_F32BF16_W32, 64)
FP_AMD_BWD_CHECK(GFX11_WMMA_16x16x16_F32F16_W32, GFX11_WMMA_16x16x16_F32BF16_W32, 128)
#elif defined(FP_AMD_GFX12_WMMA)
FP_AMD_BWD_CHECK(GFX12_WMMA_16x16x16_F32F16_W32, GFX12_WMMA_16x16x16_F32BF16_W32, 64)
FP_AMD_BWD_CHECK(GFX12_WMMA_16x16x16_F32F16_W32, GFX12_WMMA_16x16x16_F32BF16_W32, 128)
#elif defined(FP_AMD_MFMA_BF16_1K)
FP_AMD_BWD_CHECK(CDNA_MFMA_32x32x8_F32F16, CDNA_MFMA_32x32x8_F32BF16_1K, 64)
FP_AMD_BWD_CHECK(CDNA_MFMA_32x32x8_F32F16, CDNA_MFMA_32x32x8_F32BF16_1K, 128)
#endif
}  // namespace flashprobe::kernels::dev
