#pragma once
// What the AMD device pass is compiling for: the atoms' feature macros (FP_AMD_WAVE,
// FP_AMD_GFX11_WMMA, FP_AMD_GFX12_WMMA, FP_AMD_MFMA_F16, FP_AMD_MFMA_BF16_1K, FP_AMD_MFMA_FP8_FNUZ;
// flashprobe/atoms/amd_targets.cuh, one list per family with targets.h). Include from .cu files only.
// The wave64 RDNA atoms live in their own translation units (probes/amd/*_w64.cu) compiled with
// -mwavefrontsize64: on RDNA the wave size belongs to the code object.
#include "flashprobe/atoms/amd_targets.cuh"
#include "flashprobe/core/device.cuh"

namespace fp_amd {

// An atom's mma() on a target without its instruction: the launcher refuses such a launch on the
// host (amd_atom_runs_on), so reaching this means a wrong-arch code object ran. Trap, never compute
// something plausible.
[[noreturn]] __device__ inline void wrong_target() { fp_dev::trap(); }

}  // namespace fp_amd
