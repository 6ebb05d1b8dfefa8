#pragma once
// What the code being compiled can use: the one place that tests the vendor and the architecture for
// the availability of an instruction or a memory path. Kernel bodies test these, never the vendor or
// the architecture themselves.
//
// Vendor capabilities, constexpr and the same in the host and the device pass of a translation unit
// (so that tile shapes, shared-memory sizes and launch configurations computed on the host match the
// device code):
//   caps::kAsyncCopy   16-byte global -> shared copies that complete asynchronously (cp.async)
//   caps::kLdmatrix    8x8 b16 matrix loads from shared memory into fragments (ldmatrix)
//
// Device capabilities of the architecture this device pass compiles for, as macros tested only by the
// instruction wrappers (the atoms, kernels/src/mma/async_copy.cuh, ldsm_imm.cuh, fast_math.cuh,
// dtype.cuh), which trap or fall back elsewhere:
//   FP_CAP_PTX           any NVIDIA device pass (ex2.approx, the fast reciprocal)
//   FP_CAP_LDMATRIX      sm_75 and later
//   FP_CAP_SM80          sm_80 and later: cp.async, mma.sync m16n8k{8,16,32}, cvt.rn.{f16x2,bf16x2}.f32
//   FP_CAP_SM90          sm_90 and later: TMA, mbarrier try_wait
//   FP_CAP_SM90A         sm_90a: wgmma
//   the AMD matrix families (FP_AMD_GFX11_WMMA, ...): amd_targets.cuh
// Host predicates of a device's architecture: targets.h (the lists the dispatcher and the probe
// registry read).
#include "flashprobe/core/vendor.h"

#if defined(FP_VENDOR_CUDA) && defined(__CUDA_ARCH__)
#define FP_CAP_PTX 1
#if __CUDA_ARCH__ >= 750
#define FP_CAP_LDMATRIX 1
#endif
#if __CUDA_ARCH__ >= 800
#define FP_CAP_SM80 1
#endif
#if __CUDA_ARCH__ >= 900
#define FP_CAP_SM90 1
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FP_CAP_SM90A 1
#endif
#endif

namespace flashprobe::caps {
#if defined(FP_VENDOR_CUDA)
inline constexpr bool kAsyncCopy = true;
inline constexpr bool kLdmatrix = true;
#else
inline constexpr bool kAsyncCopy = false;
inline constexpr bool kLdmatrix = false;
#endif
}  // namespace flashprobe::caps
