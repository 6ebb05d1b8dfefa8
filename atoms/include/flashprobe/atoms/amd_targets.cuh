#pragma once
// What an AMD device pass is compiling for, as feature macros (the device-side spelling of the lists
// in targets.h; tests/atoms/CMakeLists.txt compiles this header for every target of those lists, and
// for targets outside them, and checks each macro against the list). Only the atoms test these;
// kernel code never tests the target.
//
//   FP_AMD_WAVE               wave size of this translation unit (32 or 64; 0 outside an AMD device pass)
//   FP_AMD_GFX11_WMMA         targets::kGfx11Wmma        RDNA3/3.5 WMMA
//   FP_AMD_GFX12_WMMA         targets::kGfx12Wmma        RDNA4 WMMA
//   FP_AMD_MFMA_F16           targets::kCdnaMfmaF16      v_mfma_f32_{32x32x8,16x16x16}f16
//   FP_AMD_MFMA_BF16_1K       targets::kCdnaMfmaBf16_1k  the bf16 "_1k" forms
//   FP_AMD_MFMA_FP8_FNUZ      targets::kCdnaMfmaFp8Fnuz  v_mfma_f32_16x16x32_fp8_fp8 reading FNUZ fp8
//
// The wave size is a per-code-object choice on RDNA (wave32 default, wave64 with
// -mwavefrontsize64). clang-19 defines __AMDGCN_WAVEFRONT_SIZE__, ROCm 5.2's clang 15 only
// __AMDGCN_WAVEFRONT_SIZE.
#if defined(__AMDGCN_WAVEFRONT_SIZE__)
#define FP_AMD_WAVE __AMDGCN_WAVEFRONT_SIZE__
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define FP_AMD_WAVE __AMDGCN_WAVEFRONT_SIZE
#else
#define FP_AMD_WAVE 0
#endif

#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__) || defined(__gfx1153__)
#define FP_AMD_GFX11_WMMA 1
#endif
#if defined(__gfx1200__) || defined(__gfx1201__)
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
