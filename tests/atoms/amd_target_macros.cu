// Compiled by amd_target_macros.py for one AMD target at a time (-DFP_CHECK_TARGET="gfx1100"): each
// device-side feature macro of flashprobe/atoms/amd_targets.cuh is defined exactly when the target is
// in its host list (flashprobe/atoms/targets.h), so the two spellings of a target list cannot drift.
#include "flashprobe/atoms/amd_targets.cuh"
#include "flashprobe/atoms/targets.h"

namespace t = flashprobe::atoms::targets;
using flashprobe::atoms::in;

#if defined(FP_AMD_GFX11_WMMA)
static_assert(in(t::kGfx11Wmma, FP_CHECK_TARGET), "FP_AMD_GFX11_WMMA is defined for a target outside kGfx11Wmma");
#else
static_assert(!in(t::kGfx11Wmma, FP_CHECK_TARGET), "kGfx11Wmma lists a target FP_AMD_GFX11_WMMA misses");
#endif
#if defined(FP_AMD_GFX12_WMMA)
static_assert(in(t::kGfx12Wmma, FP_CHECK_TARGET), "FP_AMD_GFX12_WMMA is defined for a target outside kGfx12Wmma");
#else
static_assert(!in(t::kGfx12Wmma, FP_CHECK_TARGET), "kGfx12Wmma lists a target FP_AMD_GFX12_WMMA misses");
#endif
#if defined(FP_AMD_MFMA_F16)
static_assert(in(t::kCdnaMfmaF16, FP_CHECK_TARGET), "FP_AMD_MFMA_F16 is defined for a target outside kCdnaMfmaF16");
#else
static_assert(!in(t::kCdnaMfmaF16, FP_CHECK_TARGET), "kCdnaMfmaF16 lists a target FP_AMD_MFMA_F16 misses");
#endif
#if defined(FP_AMD_MFMA_BF16_1K)
static_assert(in(t::kCdnaMfmaBf16_1k, FP_CHECK_TARGET), "FP_AMD_MFMA_BF16_1K is defined outside kCdnaMfmaBf16_1k");
#else
static_assert(!in(t::kCdnaMfmaBf16_1k, FP_CHECK_TARGET), "kCdnaMfmaBf16_1k lists a target FP_AMD_MFMA_BF16_1K misses");
#endif
#if defined(FP_AMD_MFMA_FP8_FNUZ)
static_assert(in(t::kCdnaMfmaFp8Fnuz, FP_CHECK_TARGET), "FP_AMD_MFMA_FP8_FNUZ is defined outside kCdnaMfmaFp8Fnuz");
#else
static_assert(!in(t::kCdnaMfmaFp8Fnuz, FP_CHECK_TARGET), "kCdnaMfmaFp8Fnuz lists a target FP_AMD_MFMA_FP8_FNUZ misses");
#endif
