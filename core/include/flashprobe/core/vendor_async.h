#pragma once
// The vendor shim's stream-ordered host copies and pinned host memory (core/device_memory.h's GPU
// memory), beside vendor.h rather than in it: host code alone uses them, and every kernel source
// includes vendor.h.
#include "flashprobe/core/vendor.h"

#ifdef FP_HAVE_GPU_RUNTIME
namespace fp_rt {

#if defined(FP_VENDOR_HIP)
inline Error memcpy_h2d_async(void* dst, const void* src, std::size_t n, Stream s) {
  return hipMemcpyAsync(dst, src, n, hipMemcpyHostToDevice, s);
}
inline Error memcpy_d2h_async(void* dst, const void* src, std::size_t n, Stream s) {
  return hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToHost, s);
}
inline Error memset_async(void* p, int value, std::size_t n, Stream s) { return hipMemsetAsync(p, value, n, s); }
inline Error malloc_host(void** p, std::size_t n) { return hipHostMalloc(p, n, 0); }
inline Error free_host(void* p) { return hipHostFree(p); }
#else
inline Error memcpy_h2d_async(void* dst, const void* src, std::size_t n, Stream s) {
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s);
}
inline Error memcpy_d2h_async(void* dst, const void* src, std::size_t n, Stream s) {
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s);
}
inline Error memset_async(void* p, int value, std::size_t n, Stream s) { return cudaMemsetAsync(p, value, n, s); }
inline Error malloc_host(void** p, std::size_t n) { return cudaMallocHost(p, n); }
inline Error free_host(void* p) { return cudaFreeHost(p); }
#endif

}  // namespace fp_rt
#endif
