// The bf16 matrix-product ceiling of `flashprobe bench`: the vendor BLAS, loaded at run time (so
// the executable needs no BLAS to start), times an n x n x n bf16 product with f32 accumulation and
// bf16 output -- what `x @ y` does for bf16 tensors in PyTorch -- with the same event timer as the
// kernels. CUDA: cuBLAS (libcublas.so.13 or .12, cublasGemmEx). HIP: no BLAS binding (Debian's ROCm
// packages no hipBLAS/rocBLAS headers), so the record says why instead of a number.
#include "bench/gemm_ceiling.h"

#include <dlfcn.h>

#include <string>

#include "bench/random_tiled.h"
#include "bench/timer.h"
#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"

#if defined(FP_HAVE_GPU_RUNTIME) && defined(FP_VENDOR_CUDA)
#include <cublas_v2.h>
#endif

namespace flashprobe::bench {

#if defined(FP_HAVE_GPU_RUNTIME) && defined(FP_VENDOR_CUDA)
namespace {
using Create = cublasStatus_t (*)(cublasHandle_t*);
using Destroy = cublasStatus_t (*)(cublasHandle_t);
using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                  const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                  cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw GpuError(what, int(s), "cuBLAS status", __FILE__, __LINE__);
}
}  // namespace

GemmCeiling gemm_ceiling_tflops(int n) {
  GemmCeiling out;
  void* lib = nullptr;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) {
      out.library = name;
      break;
    }
  if (!lib) {
    out.why_not = "no cuBLAS library found (libcublas.so.13/.12): " + std::string(dlerror());
    return out;
  }
  const auto create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
  const auto destroy = reinterpret_cast<Destroy>(dlsym(lib, "cublasDestroy_v2"));
  const auto gemm = reinterpret_cast<GemmEx>(dlsym(lib, "cublasGemmEx"));
  if (!create || !destroy || !gemm) {
    out.why_not = out.library + " lacks cublasCreate_v2/cublasDestroy_v2/cublasGemmEx";
    return out;
  }
  // Random bf16 operands (never zeros), as the kernels' inputs are made.
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 2);
  a.upload(random_tiled(DType::bf16, static_cast<std::int64_t>(elems), 2000));
  b.upload(random_tiled(DType::bf16, static_cast<std::int64_t>(elems), 2001));
  cublasHandle_t h = nullptr;
  check_blas(create(&h), "cublasCreate");
  const float alpha = 1, beta = 0;
  try {
    const Timing t = time_device([&](int) {
      check_blas(gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.data(), CUDA_R_16BF, n, b.data(), CUDA_R_16BF, n,
                      &beta, c.data(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
    });
    out.tflops = 2.0 * double(n) * n * n / (t.median_ms * 1e-3) / 1e12;
  } catch (...) {
    destroy(h);
    throw;
  }
  check_blas(destroy(h), "cublasDestroy");
  return out;
}
#elif defined(FP_HAVE_GPU_RUNTIME)
GemmCeiling gemm_ceiling_tflops(int) {
  GemmCeiling out;
  out.why_not = "no BLAS binding in the hip build (Debian's ROCm packages no hipBLAS/rocBLAS headers)";
  return out;
}
#else
GemmCeiling gemm_ceiling_tflops(int) { throw NoDevice("no GPU device: this build has no GPU backend"); }
#endif

}  // namespace flashprobe::bench
