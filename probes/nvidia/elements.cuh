#pragma once
// Exact float -> element-bit conversions used by the experiment kernels. The host launchers have
// already checked that every value is exactly representable (exact.h), so round-to-nearest here
// never rounds; it only changes representation.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "flashprobe/core/device.cuh"

namespace flashprobe::nvidia {

enum class Elem { f16, bf16, s8 };

template <Elem E>
FP_DEV std::uint32_t elem_bits(float v) {
  if constexpr (E == Elem::f16) return __half_as_ushort(__float2half_rn(v));
  else if constexpr (E == Elem::bf16) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else return static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(__float2int_rn(v))));
}

// Register r of a fragment packed from consecutive elements v[0..]: two 16-bit elements or four
// 8-bit elements per 32-bit register, the lower-numbered element in the lower bits (PTX order).
template <Elem E>
FP_DEV std::uint32_t pack_register(const float* v, int r) {
  if constexpr (E == Elem::s8) {
    std::uint32_t x = 0;
    for (int q = 0; q < 4; ++q) x |= elem_bits<E>(v[4 * r + q]) << (8 * q);
    return x;
  } else {
    return elem_bits<E>(v[2 * r]) | (elem_bits<E>(v[2 * r + 1]) << 16);
  }
}

}  // namespace flashprobe::nvidia
