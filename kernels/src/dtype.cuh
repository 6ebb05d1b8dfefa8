#pragma once
// Device element types: loads to f32 and stores from f32 for f16, bf16 and f32 tensors.
// This is the only kernel header with a vendor #if (the fp16 header's name); everything else is
// spelled once for CUDA and HIP.
//   f16:  __half2float / __float2half_rn (round to nearest even) from the vendor's fp16 header.
//   bf16: by bits — a bf16 is the high half of an f32, so widening is a shift and narrowing is
//         round-to-nearest-even on the dropped 16 bits (NaN kept quiet, overflow to Inf).
#include <cstdint>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/core/dtype.h"
#if defined(FP_VENDOR_HIP)
#include <hip/hip_fp16.h>
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace flashprobe::kernels::dev {

// Element tags: kernels are templates over the input tag; the output type is a run-time switch
// (one store per output element, so the branch costs nothing).
struct F16 {
  using storage = std::uint16_t;
  static constexpr DType kType = DType::f16;
};
struct BF16 {
  using storage = std::uint16_t;
  static constexpr DType kType = DType::bf16;
};
struct F32 {
  using storage = float;
  static constexpr DType kType = DType::f32;
};

FP_DEV float f16_to_f32(std::uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
FP_DEV std::uint16_t f32_to_f16(float x) { return __half_as_ushort(__float2half_rn(x)); }
FP_DEV float bf16_to_f32(std::uint16_t bits) { return __uint_as_float(static_cast<std::uint32_t>(bits) << 16); }
FP_DEV std::uint16_t f32_to_bf16_rne(float x) {
  const std::uint32_t u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  // Add half an ulp of bf16 minus one, plus the lowest kept bit: ties go to the even neighbour.
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
// The classic bug (used only by the bf16_truncate mutant): drop the low bits, always toward zero.
FP_DEV std::uint16_t f32_to_bf16_truncate(float x) { return static_cast<std::uint16_t>(__float_as_uint(x) >> 16); }

// Round to what fp16 can hold, as an f32 (used by the rowsum_f16 mutant).
FP_DEV float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }

template <class E>
FP_DEV float load(const void* base, std::int64_t i) {
  const auto* p = static_cast<const typename E::storage*>(base);
  if constexpr (E::kType == DType::f16) return f16_to_f32(p[i]);
  else if constexpr (E::kType == DType::bf16) return bf16_to_f32(p[i]);
  else return p[i];
}

// Eight 16-bit elements of one 16-byte load (uint4, the vector type of CUDA and HIP), widened to f32
// exactly as load<E> widens them one by one; element 2i is the low half of word i.
template <class E>
FP_DEV void widen8(const uint4& c, float (&f)[8]) {
  static_assert(sizeof(typename E::storage) == 2, "16-bit elements");
  const std::uint32_t w[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
  for (int x = 0; x < 4; ++x) {
    if constexpr (E::kType == DType::f16) {
      f[2 * x] = f16_to_f32(static_cast<std::uint16_t>(w[x] & 0xffffu));
      f[2 * x + 1] = f16_to_f32(static_cast<std::uint16_t>(w[x] >> 16));
    } else {
      f[2 * x] = __uint_as_float(w[x] << 16);
      f[2 * x + 1] = __uint_as_float(w[x] & 0xffff0000u);
    }
  }
}

// Store v as element i of a tensor of run-time type t.
template <bool kTruncateBf16 = false>
FP_DEV void store(void* base, std::int64_t i, DType t, float v) {
  if (t == DType::f32) {
    static_cast<float*>(base)[i] = v;
  } else if (t == DType::f16) {
    static_cast<std::uint16_t*>(base)[i] = f32_to_f16(v);
  } else {
    static_cast<std::uint16_t*>(base)[i] = kTruncateBf16 ? f32_to_bf16_truncate(v) : f32_to_bf16_rne(v);
  }
}

// Elements i and i + 1 of a 16-bit tensor of run-time type t (f16 or bf16) in one 32-bit store, each
// rounded as store() rounds it. @pre i even and base 4-byte aligned (the caller checks; f32 tensors
// take two store() calls).
FP_DEV void store2_16(void* base, std::int64_t i, DType t, float v0, float v1) {
  const std::uint32_t lo = t == DType::f16 ? f32_to_f16(v0) : f32_to_bf16_rne(v0);
  const std::uint32_t hi = t == DType::f16 ? f32_to_f16(v1) : f32_to_bf16_rne(v1);
  static_cast<std::uint32_t*>(base)[i / 2] = lo | (hi << 16);
}

// One f32 rounded to the 16-bit input type E (nearest even).
template <class E>
FP_DEV std::uint16_t to_bits(float x) {
  if constexpr (E::kType == DType::f16) return f32_to_f16(x);
  else return f32_to_bf16_rne(x);
}

// Two values rounded to nearest even and packed (lo in the low half), as matrix instructions' A
// register pairs want them (P of P·V in mma and wgmma): one cvt.rn.{f16,bf16}x2.f32 on sm_80+
// (the bit-twiddling bf16 rounding costs about five integer instructions per value), element-wise
// elsewhere. Same results either way (NaN payloads aside: P holds exp2 of finite scores).
template <class E>
FP_DEV std::uint32_t to_bits2(float lo, float hi) {
#if defined(FP_CAP_SM80)
  if constexpr (E::kType == DType::f16) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
#else
  return static_cast<std::uint32_t>(to_bits<E>(lo)) | (static_cast<std::uint32_t>(to_bits<E>(hi)) << 16);
#endif
}

// to_bits2 for a 16-bit type t (f16 or bf16) known at run time (an output's type).
FP_DEV std::uint32_t to_bits2_as(DType t, float lo, float hi) {
  return t == DType::f16 ? to_bits2<F16>(lo, hi) : to_bits2<BF16>(lo, hi);
}

}  // namespace flashprobe::kernels::dev
