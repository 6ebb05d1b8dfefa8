#pragma once
// cp.async (sm_80+): 16-byte global -> shared copies that bypass registers and complete
// asynchronously, grouped and waited on per group. The mma kernel double-buffers its K/V tiles
// with them: the next tile's copies are in flight while the current tile is computed.
#include <cstdint>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/core/device.cuh"

namespace flashprobe::kernels::dev {

// Copies 16 bytes from global src to shared dst; when !valid, writes 16 zero bytes and reads nothing
// (src must still be a mapped address: the caller passes a row it owns).
FP_DEV void cp_async16(void* dst, const void* src, bool valid) {
#if defined(FP_CAP_SM80)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0) : "memory");
#else
  (void)dst, (void)src, (void)valid;
  fp_dev::trap();
#endif
}

FP_DEV void cp_async_commit() {
#if defined(FP_CAP_SM80)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
FP_DEV void cp_async_wait() {
#if defined(FP_CAP_SM80)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace flashprobe::kernels::dev
