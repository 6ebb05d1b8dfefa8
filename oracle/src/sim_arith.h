#pragma once
// The arithmetic of the simulated kernels (simulated.cpp, simulated_backward.cpp): rounding toward
// zero and fp32 dot products summed the way a GPU kernel sums them.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "flashprobe/core/dtype.h"
#include "flashprobe/core/half.h"

namespace flashprobe::oracle::detail {

// Round toward zero into t (the truncation bug, and the tensor-core accumulator's behaviour for f32).
inline double round_toward_zero(DType t, double x) {
  const double r = round_to(t, x);
  if (!std::isfinite(r) || std::abs(r) <= std::abs(x)) return r;
  if (t == DType::f32) return std::nextafter(static_cast<float>(r), 0.0f);
  return from_bits16(t, static_cast<std::uint16_t>(to_bits16(t, r) - 1));  // sign-magnitude: one step down
}

// sum_t a[t] * b[t * stride] in fp32: sequential fused multiply-adds (chunk <= 0), or tensor-core-like
// exact chunks of `chunk` products added to the fp32 accumulator with truncation.
inline float fp32_dot(const float* a, const float* b, int n, std::size_t stride, int chunk) {
  float s = 0;
  if (chunk <= 0) {
    for (int t = 0; t < n; ++t) s = std::fma(a[t], b[static_cast<std::size_t>(t) * stride], s);
    return s;
  }
  for (int t0 = 0; t0 < n; t0 += chunk) {
    double c = s;  // products of 16-bit inputs are exact in double
    for (int t = t0; t < std::min(n, t0 + chunk); ++t) c += double{a[t]} * b[static_cast<std::size_t>(t) * stride];
    s = static_cast<float>(round_toward_zero(DType::f32, c));
  }
  return s;
}

}  // namespace flashprobe::oracle::detail
