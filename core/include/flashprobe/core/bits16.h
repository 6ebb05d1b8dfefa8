#pragma once
// The rounding of a double to a 16-bit float format (fp16: 5 exponent and 10 mantissa bits, bf16: 8
// and 7): round to nearest, ties to even, straight from the double (no double rounding through
// float); NaN stays NaN (quiet, sign kept), Inf keeps its sign, overflow goes to Inf, underflow to
// subnormals and signed zero. Integer operations only, so the host and the device round every value
// to the same bits: core's to_f16_bits / to_bf16_bits (half.h) are this function, and the device
// input generator (counter_rng.h) calls it too, and decode() below. C++20, no dependencies.
//
//   std::uint16_t h = flashprobe::bits16::encode(5, 10, 0.1);  // 0x2E66, fp16's nearest to 0.1
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIP__)
#define FP_BITS16_HD __host__ __device__ __inline__
#else
#define FP_BITS16_HD inline
#endif

namespace flashprobe::bits16 {

// The bit cast on the host and on both devices: CUDA's device memcpy, clang's builtin (HIP's device
// compiler, and the host compilers).
template <class To, class From>
FP_BITS16_HD To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
#if defined(__CUDA_ARCH__)
  memcpy(&to, &from, sizeof(To));
#else
  __builtin_memcpy(&to, &from, sizeof(To));
#endif
  return to;
}

FP_BITS16_HD std::uint64_t double_bits(double x) { return bit_cast<std::uint64_t>(x); }

// The format with `ebits` exponent and `mbits` stored mantissa bits nearest to x (see above).
FP_BITS16_HD std::uint16_t encode(int ebits, int mbits, double x) {
  const std::uint64_t u = double_bits(x);
  const std::uint32_t sign = static_cast<std::uint32_t>(u >> 63) << (ebits + mbits);
  const std::uint32_t inf = ((1u << ebits) - 1) << mbits;
  const int e = static_cast<int>((u >> 52) & 0x7FF);
  const std::uint64_t m = u & ((std::uint64_t{1} << 52) - 1);
  if (e == 0x7FF) return static_cast<std::uint16_t>(sign | inf | (m ? 1u << (mbits - 1) : 0u));  // NaN (quiet), Inf
  if (e == 0) return static_cast<std::uint16_t>(sign);  // zero, or a double subnormal: far below half the least subnormal
  const int bias = (1 << (ebits - 1)) - 1, E = e - 1023;
  // x = sig * 2^(E - 52). One unit of the result: 2^(E - mbits) for a normal result, 2^(1 - bias - mbits)
  // for a subnormal one; keep counts those units, the implicit leading one included.
  const int unit = (E >= 1 - bias ? E : 1 - bias) - mbits;
  const int shift = unit - (E - 52);  // >= 52 - mbits
  if (shift >= 64) return static_cast<std::uint16_t>(sign);
  const std::uint64_t sig = (std::uint64_t{1} << 52) | m;
  std::uint64_t keep = sig >> shift;
  const std::uint64_t rest = sig & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  keep += static_cast<std::uint64_t>(rest > half) | (static_cast<std::uint64_t>(rest == half) & keep & 1);  // branch-free
  // A normal result: (biased exponent - 1) << mbits plus keep (whose implicit one adds the last 1); a
  // mantissa that rounded up to the next power of two carries into the exponent by the same sum. A
  // subnormal result is keep itself (keep = 2^mbits is the least normal number).
  const std::uint64_t bits = (E >= 1 - bias ? static_cast<std::uint64_t>(E + bias - 1) << mbits : 0) + keep;
  if (bits >= inf) return static_cast<std::uint16_t>(sign | inf);
  return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(bits));
}

// The value of `bits` in that format, exactly (every 16-bit value is a double).
FP_BITS16_HD double decode(int ebits, int mbits, std::uint16_t bits) {
  const std::uint32_t emask = (1u << ebits) - 1, e = (bits >> mbits) & emask, m = bits & ((1u << mbits) - 1);
  const std::uint64_t sign = static_cast<std::uint64_t>((bits >> (ebits + mbits)) & 1u) << 63;
  const int bias = (1 << (ebits - 1)) - 1;
  std::uint64_t u;
  if (e == emask) {
    u = sign | (std::uint64_t{0x7FF} << 52) | (m ? std::uint64_t{1} << 51 : 0);  // NaN (quiet) or Inf
  } else if (e != 0) {
    u = sign | (static_cast<std::uint64_t>(static_cast<int>(e) - bias + 1023) << 52) | (static_cast<std::uint64_t>(m) << (52 - mbits));
  } else if (m == 0) {
    u = sign;
  } else {  // subnormal: m * 2^(1 - bias - mbits), normalised onto the double's exponent
    int p = mbits - 1;
    while (!((m >> p) & 1u)) --p;  // the leading one of m
    const std::uint64_t frac = (static_cast<std::uint64_t>(m) << (52 - p)) & ((std::uint64_t{1} << 52) - 1);
    u = sign | (static_cast<std::uint64_t>(p + 1 - bias - mbits + 1023) << 52) | frac;
  }
  return bit_cast<double>(u);
}

FP_BITS16_HD std::uint16_t f16(double x) { return encode(5, 10, x); }
FP_BITS16_HD std::uint16_t bf16(double x) { return encode(8, 7, x); }

}  // namespace flashprobe::bits16
