#pragma once
// Exact float -> element-bit conversions used by the experiment kernels. The host launchers have
// already checked that every value is exactly representable (exact.h), so round-to-nearest here
// never rounds; it only changes representation.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/core/device.cuh"

namespace flashprobe::nvidia {

enum class Elem { f16, bf16, s8 };

template <Elem E>
FP_DEV std::uint32_t elem_bits(float v) {
  if constexpr (E == Elem::f16) return __half_as_ushort(__float2half_rn(v));
  else if constexpr (E == Elem::bf16) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else return static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(__float2int_rn(v))));
}

// kRegs registers of kIn elements from consecutive floats v[0..], packed as every atom's mma()
// expects (flashprobe/atoms/atom_layout.cuh: the lower-numbered slot in the lower bits).
template <Elem kIn, int kRegs>
FP_DEV void load_fragment(const float* v, std::uint32_t (&regs)[kRegs]) {
  constexpr int kBits = kIn == Elem::s8 ? 8 : 16, kSlots = kRegs * 32 / kBits;
  std::uint32_t bits[kSlots];
#pragma unroll
  for (int i = 0; i < kSlots; ++i) bits[i] = elem_bits<kIn>(v[i]);
#pragma unroll
  for (int r = 0; r < kRegs; ++r) regs[r] = atoms::pack_register<kBits>(bits, r);
}

}  // namespace flashprobe::nvidia
