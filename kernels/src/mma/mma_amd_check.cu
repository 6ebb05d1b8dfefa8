// Compiled by clang-19 for gfx1100, gfx1201, gfx942 and gfx90a (cmake/AmdDeviceCode.cmake): the mma
// kernel instantiated with the atom of each target family, so the machine-code check can assert the
// matrix instructions are emitted and the resource records (VGPRs, LDS, occupancy) are produced.
#include "flashprobe/atoms/amd_matrix.cuh"
#include "src/mma/mma_attn.cuh"

namespace flashprobe::kernels::dev {
#if defined(FP_AMD_GFX11_WMMA)
template __global__ void mma_fwd<atoms::GFX11_WMMA_16x16x16_F32F16_W32, F16, 64, 4, 64>(Params, MmaOrder, float);
template __global__ void mma_fwd<atoms::GFX11_WMMA_16x16x16_F32F16_W32, F16, 128, 4, 64>(Params, MmaOrder, float);
template __global__ void mma_fwd<atoms::GFX11_WMMA_16x16x16_F32BF16_W32, BF16, 128, 4, 64>(Params, MmaOrder, float);
#elif defined(FP_AMD_GFX12_WMMA)
template __global__ void mma_fwd<atoms::GFX12_WMMA_16x16x16_F32F16_W32, F16, 64, 4, 64>(Params, MmaOrder, float);
template __global__ void mma_fwd<atoms::GFX12_WMMA_16x16x16_F32F16_W32, F16, 128, 4, 64>(Params, MmaOrder, float);
template __global__ void mma_fwd<atoms::GFX12_WMMA_16x16x16_F32BF16_W32, BF16, 128, 4, 64>(Params, MmaOrder, float);
#elif defined(FP_AMD_MFMA_BF16_1K)
template __global__ void mma_fwd<atoms::CDNA_MFMA_32x32x8_F32F16, F16, 64, 4, 64>(Params, MmaOrder, float);
template __global__ void mma_fwd<atoms::CDNA_MFMA_32x32x8_F32F16, F16, 128, 4, 64>(Params, MmaOrder, float);
template __global__ void mma_fwd<atoms::CDNA_MFMA_32x32x8_F32BF16_1K, BF16, 128, 4, 64>(Params, MmaOrder, float);
#endif
}  // namespace flashprobe::kernels::dev
