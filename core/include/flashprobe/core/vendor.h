#pragma once
// The vendor shim: the one place where CUDA and HIP differ in spelling.
//
// Host side: runtime calls (memory, copies, events, streams, device properties, errors) under the
// names fp_rt::*, mapped to the CUDA runtime or the real HIP runtime. (Debian's HIP 5.2 headers for
// NVIDIA do not compile with CUDA 13, so the CUDA side maps to the CUDA runtime directly.)
// Device side: see device.cuh (thread ids, barriers, shuffles with explicit width, wave size).
//
// Kernel code never tests the vendor; this header and device.cuh do it for everyone.
// Example:
//   FP_CHECK(fp_rt::malloc(&ptr, bytes));
//   kernel<<<grid, block, smem, stream>>>(args);
//   FP_CHECK_LAUNCH("kernel");
#include <cstddef>
#include <string>

#include "flashprobe/core/error.h"

#if defined(__HIP__) || defined(FLASHPROBE_BACKEND_HIP)
#define FP_VENDOR_HIP 1
#include <hip/hip_runtime.h>
#elif defined(__CUDACC__) || defined(FLASHPROBE_BACKEND_CUDA)
#define FP_VENDOR_CUDA 1
#include <cuda_runtime.h>
#else
#define FP_VENDOR_NONE 1
#endif

#if defined(FP_VENDOR_HIP) || defined(FP_VENDOR_CUDA)
#define FP_HAVE_GPU_RUNTIME 1
#endif

#ifdef FP_HAVE_GPU_RUNTIME
namespace fp_rt {

#if defined(FP_VENDOR_HIP)
#define FP_RT_NAME(x) hip##x
#else
#define FP_RT_NAME(x) cuda##x
#endif

using Error = FP_RT_NAME(Error_t);
using Stream = FP_RT_NAME(Stream_t);
using Event = FP_RT_NAME(Event_t);
#if defined(FP_VENDOR_HIP)
using DeviceProp = hipDeviceProp_t;
#else
using DeviceProp = cudaDeviceProp;
#endif
inline constexpr Error kSuccess = FP_RT_NAME(Success);
inline constexpr const char* kVendor =
#if defined(FP_VENDOR_HIP)
    "amd";
#else
    "nvidia";
#endif

inline Error malloc(void** p, std::size_t n) { return FP_RT_NAME(Malloc)(p, n); }
inline Error free(void* p) { return FP_RT_NAME(Free)(p); }
inline Error mem_get_info(std::size_t* free, std::size_t* total) { return FP_RT_NAME(MemGetInfo)(free, total); }
#if defined(FP_VENDOR_HIP)
inline constexpr Error kErrorMemoryAllocation = hipErrorOutOfMemory;
#else
inline constexpr Error kErrorMemoryAllocation = cudaErrorMemoryAllocation;
#endif
inline Error memcpy_h2d(void* dst, const void* src, std::size_t n) {
  return FP_RT_NAME(Memcpy)(dst, src, n, FP_RT_NAME(MemcpyHostToDevice));
}
inline Error memcpy_d2h(void* dst, const void* src, std::size_t n) {
  return FP_RT_NAME(Memcpy)(dst, src, n, FP_RT_NAME(MemcpyDeviceToHost));
}
inline Error memcpy_d2d(void* dst, const void* src, std::size_t n) {
  return FP_RT_NAME(Memcpy)(dst, src, n, FP_RT_NAME(MemcpyDeviceToDevice));
}
inline Error memcpy_d2d_async(void* dst, const void* src, std::size_t n, Stream s) {
  return FP_RT_NAME(MemcpyAsync)(dst, src, n, FP_RT_NAME(MemcpyDeviceToDevice), s);
}
inline Error memset(void* p, int value, std::size_t n) { return FP_RT_NAME(Memset)(p, value, n); }
inline Error device_synchronize() { return FP_RT_NAME(DeviceSynchronize)(); }
inline Error get_last_error() { return FP_RT_NAME(GetLastError)(); }
inline Error peek_at_last_error() { return FP_RT_NAME(PeekAtLastError)(); }
inline const char* error_name(Error e) { return FP_RT_NAME(GetErrorName)(e); }
inline const char* error_string(Error e) { return FP_RT_NAME(GetErrorString)(e); }
inline Error get_device_count(int* n) { return FP_RT_NAME(GetDeviceCount)(n); }
inline Error set_device(int d) { return FP_RT_NAME(SetDevice)(d); }
inline Error get_device(int* d) { return FP_RT_NAME(GetDevice)(d); }
inline Error get_device_properties(DeviceProp* p, int d) { return FP_RT_NAME(GetDeviceProperties)(p, d); }
inline Error driver_get_version(int* v) { return FP_RT_NAME(DriverGetVersion)(v); }
inline Error runtime_get_version(int* v) { return FP_RT_NAME(RuntimeGetVersion)(v); }
inline Error event_create(Event* e) { return FP_RT_NAME(EventCreate)(e); }
inline Error event_destroy(Event e) { return FP_RT_NAME(EventDestroy)(e); }
inline Error event_record(Event e, Stream s = nullptr) { return FP_RT_NAME(EventRecord)(e, s); }
inline Error event_synchronize(Event e) { return FP_RT_NAME(EventSynchronize)(e); }
inline Error event_elapsed_ms(float* ms, Event a, Event b) { return FP_RT_NAME(EventElapsedTime)(ms, a, b); }
inline Error stream_create(Stream* s) { return FP_RT_NAME(StreamCreate)(s); }
inline Error stream_destroy(Stream s) { return FP_RT_NAME(StreamDestroy)(s); }
inline Error stream_synchronize(Stream s) { return FP_RT_NAME(StreamSynchronize)(s); }
// Graphs: record a stream's work once, replay it with one launch (bench timing without host gaps).
using Graph = FP_RT_NAME(Graph_t);
using GraphExec = FP_RT_NAME(GraphExec_t);
inline Error stream_begin_capture(Stream s) { return FP_RT_NAME(StreamBeginCapture)(s, FP_RT_NAME(StreamCaptureModeRelaxed)); }
inline Error stream_end_capture(Stream s, Graph* g) { return FP_RT_NAME(StreamEndCapture)(s, g); }
inline Error graph_instantiate(GraphExec* e, Graph g) { return FP_RT_NAME(GraphInstantiateWithFlags)(e, g, 0); }
inline Error graph_launch(GraphExec e, Stream s) { return FP_RT_NAME(GraphLaunch)(e, s); }
inline Error graph_exec_destroy(GraphExec e) { return FP_RT_NAME(GraphExecDestroy)(e); }
inline Error graph_destroy(Graph g) { return FP_RT_NAME(GraphDestroy)(g); }
// Raise a kernel's dynamic shared-memory/LDS limit (needed above 48 KB on NVIDIA).
template <class F>
inline Error set_max_dynamic_smem(F* kernel, int bytes) {
  return FP_RT_NAME(FuncSetAttribute)(reinterpret_cast<const void*>(kernel),
                                      FP_RT_NAME(FuncAttributeMaxDynamicSharedMemorySize), bytes);
}

#undef FP_RT_NAME
}  // namespace fp_rt

// Check a runtime call; on failure throw flashprobe::GpuError naming the call, code, file, line.
#define FP_CHECK(call)                                                                              \
  do {                                                                                              \
    const ::fp_rt::Error fp_check_err_ = (call);                                                    \
    if (fp_check_err_ != ::fp_rt::kSuccess) {                                                       \
      (void)::fp_rt::get_last_error(); /* clear sticky-free errors so the next call starts clean */ \
      throw ::flashprobe::GpuError(#call, static_cast<int>(fp_check_err_),                          \
                                   ::fp_rt::error_name(fp_check_err_), __FILE__, __LINE__);         \
    }                                                                                               \
  } while (0)

// Allocates n device bytes for `what`; out of memory throws flashprobe::DeviceMemoryShortage naming
// `what`, n and the runtime's free / total bytes (the harness's shortage, not a kernel's failure);
// another error throws GpuError.
namespace fp_rt {
inline void* device_malloc(std::size_t n, const std::string& what) {
  void* p = nullptr;
  const Error e = malloc(&p, n);
  if (e == kErrorMemoryAllocation) {
    (void)get_last_error();
    std::size_t free_b = 0, total_b = 0;
    if (mem_get_info(&free_b, &total_b) != kSuccess) free_b = total_b = 0, (void)get_last_error();
    throw ::flashprobe::DeviceMemoryShortage(what, n, free_b, total_b, error_name(e));
  }
  FP_CHECK(e);
  return p;
}
}  // namespace fp_rt

// Check a kernel launch (configuration errors surface through the last error).
#define FP_CHECK_LAUNCH(what) FP_CHECK((::fp_rt::get_last_error()))
#endif  // FP_HAVE_GPU_RUNTIME
