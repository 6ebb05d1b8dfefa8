#pragma once
// The bf16 matrix-product ceiling measured beside the kernels (gemm_ceiling.cpp says how).
#include <optional>
#include <string>

namespace flashprobe::bench {

struct GemmCeiling {
  std::optional<double> tflops;  // 2 n^3 / median time
  std::string library;           // the BLAS that ran it
  std::string why_not;           // when tflops is empty
};

// @throws NoDevice without a GPU, GpuError when the BLAS or a runtime call fails.
GemmCeiling gemm_ceiling_tflops(int n = 8192);

}  // namespace flashprobe::bench
