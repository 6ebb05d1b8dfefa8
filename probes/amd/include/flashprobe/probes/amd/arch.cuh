#pragma once
// What the AMD device pass is compiling for, as feature macros the atoms test (and nothing else
// does: kernel code never tests the target, see STYLE.md). Include from .cu files only.
//
//   FP_AMD_WAVE               wave size of this translation unit (32 or 64; 0 outside an AMD device pass)
//   FP_AMD_GFX11_WMMA         RDNA3/3.5 WMMA (gfx1100-1103, gfx1150-1153)
//   FP_AMD_GFX12_WMMA         RDNA4 WMMA (gfx1200, gfx1201)
//   FP_AMD_MFMA_F16           v_mfma_f32_{32x32x8,16x16x16}f16: gfx908 and later CDNA
//   FP_AMD_MFMA_BF16_1K       the bf16 "_1k" forms: gfx90a and later CDNA
//   FP_AMD_MFMA_FP8_FNUZ      v_mfma_f32_16x16x32_fp8_fp8 reading FNUZ fp8: gfx940/941/942 only
//
// The wave size is a per-code-object choice on RDNA (wave32 default, wave64 with
// -mwavefrontsize64), which is why the wave64 WMMA atoms live in their own translation units
// (probes/amd/*_w64.cu) compiled with that flag. clang-19 defines __AMDGCN_WAVEFRONT_SIZE__, ROCm
// 5.2's clang 15 only __AMDGCN_WAVEFRONT_SIZE.
#include "flashprobe/core/device.cuh"

#if defined(__AMDGCN_WAVEFRONT_SIZE__)
#define FP_AMD_WAVE __AMDGCN_WAVEFRONT_SIZE__
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define FP_AMD_WAVE __AMDGCN_WAVEFRONT_SIZE
#else
#define FP_AMD_WAVE 0
#endif

#if defined(__GFX11__) || defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || \
    defined(__gfx1103__) || defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__)
#define FP_AMD_GFX11_WMMA 1
#endif
#if defined(__GFX12__) || defined(__gfx1200__) || defined(__gfx1201__)
#define FP_AMD_GFX12_WMMA 1
#endif
#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || \
    defined(__gfx942__) || defined(__gfx950__)
#define FP_AMD_MFMA_F16 1
#endif
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
#define FP_AMD_MFMA_BF16_1K 1
#endif
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define FP_AMD_MFMA_FP8_FNUZ 1
#endif

namespace fp_amd {

// An atom's mma() on a target without its instruction: the launcher refuses such a launch on the
// host (amd_atom_runs_on), so reaching this means a wrong-arch code object ran. Trap, never compute
// something plausible.
[[noreturn]] __device__ inline void wrong_target() { fp_dev::trap(); }

}  // namespace fp_amd
