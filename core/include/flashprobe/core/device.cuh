#pragma once
// Device intrinsics under one spelling for CUDA and HIP (include from .cu files only).
// Shuffles take an explicit width: on AMD the wave is 32 or 64 lanes, on NVIDIA a warp is 32, and a
// reduction over a sub-group (a row of an MMA fragment, say) must name how many lanes it spans.
#include "flashprobe/core/vendor.h"

#define FP_HD __host__ __device__
#define FP_DEV __device__ __forceinline__

// __launch_bounds__ with a minimum of resident blocks per SM: CUDA then caps the registers per
// thread so that many blocks fit. HIP reads a second argument as waves per execution unit (another
// quantity, and a cap that made the decode kernel spill on CDNA): there only the block size is
// declared and the compiler sizes the registers.
#if defined(FP_VENDOR_HIP)
#define FP_LAUNCH_BOUNDS(max_threads, min_blocks_per_sm) __launch_bounds__(max_threads)
#else
#define FP_LAUNCH_BOUNDS(max_threads, min_blocks_per_sm) __launch_bounds__(max_threads, min_blocks_per_sm)
#endif

namespace fp_dev {

#if defined(FP_VENDOR_HIP)
// The wave size is a compile-time property of the code object on AMD (wave32 vs wave64).
#if defined(__AMDGCN_WAVEFRONT_SIZE)
inline constexpr int kWaveSize = __AMDGCN_WAVEFRONT_SIZE;
#else
inline constexpr int kWaveSize = 64;
#endif
#else
inline constexpr int kWaveSize = 32;
#endif

FP_DEV int lane_id() { return static_cast<int>(threadIdx.x) % kWaveSize; }
FP_DEV int wave_id() { return static_cast<int>(threadIdx.x) / kWaveSize; }
FP_DEV void barrier() { __syncthreads(); }
// The lanes of this wave meet here, with their shared-memory writes visible to each other.
FP_DEV void syncwarp() {
#if defined(FP_VENDOR_HIP)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#else
  __syncwarp();
#endif
}

template <class T>
FP_DEV T shfl_xor(T v, int lane_mask, int width = kWaveSize) {
#if defined(FP_VENDOR_HIP)
  return __shfl_xor(v, lane_mask, width);
#else
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
#endif
}

// Whether any lane of the wave passes true (every lane of the wave must call it).
FP_DEV bool any(bool v) {
#if defined(FP_VENDOR_HIP)
  return __any(v) != 0;
#else
  return __any_sync(0xffffffffu, v) != 0;
#endif
}

template <class T>
FP_DEV T shfl(T v, int src_lane, int width = kWaveSize) {
#if defined(FP_VENDOR_HIP)
  return __shfl(v, src_lane, width);
#else
  return __shfl_sync(0xffffffffu, v, src_lane, width);
#endif
}

template <class T>
FP_DEV T shfl_down(T v, unsigned delta, int width = kWaveSize) {
#if defined(FP_VENDOR_HIP)
  return __shfl_down(v, delta, width);
#else
  return __shfl_down_sync(0xffffffffu, v, delta, width);
#endif
}

// The block's dynamic shared memory (the launch's third <<<>>> argument), 128-byte aligned. No HIP
// kernel of this project uses dynamic shared memory (the mma kernel's ldmatrix path is NVIDIA's):
// there it is nullptr.
template <class T>
FP_DEV T* dynamic_smem() {
#if defined(FP_VENDOR_CUDA)
  extern __shared__ __align__(128) unsigned char fp_dynamic_smem[];
  return reinterpret_cast<T*>(fp_dynamic_smem);
#else
  return nullptr;
#endif
}

// A device path that must never run (wrong architecture for an atom, say): fail loudly.
[[noreturn]] FP_DEV void trap() {
#if defined(FP_VENDOR_HIP)
  __builtin_trap();
#else
  __trap();
#endif
  __builtin_unreachable();
}

}  // namespace fp_dev
