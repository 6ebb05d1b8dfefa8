#pragma once
// The counter-based input generator: every input element is a pure function of (seed, tensor,
// element index), so the device fills its buffers in parallel and the host computes exactly the
// same bits for any element it needs, in any order, without a stream to replay. Integer operations
// and IEEE multiplies and adds in double, never fused (deterministic on every compiler and device), then
// bits16.h's rounding: host and device give the same bits. Used by counter_inputs() (tensor.h, the
// host) and the device fill (kernels/include/flashprobe/kernels/input_fill.h). C++20, no dependencies.
//
// The draw of one element:
//   h = hash(seed, stream, index, attempt)        two splitmix64 finalizer rounds (bijective mixes)
//   z = normal(h, table)                           N(0, 1) by its quantile function: the sign is h's top
//                                                  bit, the rest a two-sided tail probability q; a table of
//                                                  |z| at q = 2^-(o+1) (1 + m/64) (63 octaves o, 64 steps m:
//                                                  tails to 2^-63, |z| ~ 9.2) interpolated linearly in
//                                                  integers. z is an integer in units of 2^-24.
//   v = z * 2^-24 * magnitude, rounded to the dtype; a draw that rounds to +-0 is drawn again with
//       attempt + 1 (inputs are never zero: zeros hide unwritten outputs).
// K has two more kinds (InputDist in tensor.h): near-identical keys (one shared random vector per
// dimension x plus jitter * noise) and rising keys (key j's rounded value times 1 + ramp * j, rounded
// again). Elements outside the logical tensor (row padding, capacity past the keys) keep the plain
// draw.
//
//   const std::int32_t* t = counter_rng::normal_table();  // host: built once; device: uploaded copy
//   std::uint32_t bits = counter_rng::plain_bits(spec, counter_rng::kQ, 17, spec.magnitude, t);
#include <cstdint>

#include "flashprobe/core/bits16.h"

#if defined(__CUDACC__) || defined(__HIP__)
#define FP_RNG_HD __host__ __device__ __inline__
#else
#define FP_RNG_HD inline
#endif

namespace flashprobe::counter_rng {

// Streams: one per tensor, and the shared key vector of near-identical keys.
inline constexpr std::uint32_t kQ = 0, kK = 1, kV = 2, kKeyBase = 3;
// The quantile table: kOctaves x (kSteps + 1) entries of |z| * 2^kZBits, rounded to integers.
inline constexpr int kOctaves = 63, kSteps = 64, kZBits = 24;
inline constexpr int kTableSize = kOctaves * (kSteps + 1);
// Redraws of an element that rounds to zero before the generator gives up (never reached in practice:
// one draw in ~10^7 rounds to zero; then the dtype's least positive normal number, signed, is used).
inline constexpr std::uint32_t kMaxAttempts = 64;

// What the fill needs, trivially copyable (a kernel argument). dtype: 0 f16, 1 bf16, 2 f32 (DType's order).
struct Spec {
  std::uint64_t seed = 0;
  int dtype = 0;
  double magnitude = 1.0;   // Q and K: magnitude * N(0, 1); V: N(0, 1)
  double key_jitter = -1;   // >= 0: near-identical keys
  double key_ramp = 0;      // > 0: rising keys
};

FP_RNG_HD std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// 64 random bits of (seed, stream, index, attempt); index < 2^54.
FP_RNG_HD std::uint64_t hash(std::uint64_t seed, std::uint32_t stream, std::uint64_t index, std::uint32_t attempt) {
  const std::uint64_t counter = (index << 10) | (static_cast<std::uint64_t>(attempt & 0xFF) << 2) | (stream & 3u);
  return mix64(mix64(counter + 0x9E3779B97F4A7C15ULL) ^ mix64(seed ^ 0xD1B54A32D192ED03ULL));
}

FP_RNG_HD int leading_one(std::uint64_t r) {  // the position of r's highest set bit (r > 0)
#if defined(__CUDA_ARCH__)
  return 63 - __clzll(static_cast<long long>(r));
#else  // the host compilers and HIP's device compiler (clang)
  return 63 - __builtin_clzll(r);
#endif
}

// N(0, 1) in units of 2^-kZBits from 64 random bits (see the top of the file).
FP_RNG_HD std::int64_t normal(std::uint64_t h, const std::int32_t* table) {
  std::uint64_t r = h & ((std::uint64_t{1} << 63) - 1);  // q = r / 2^63
  if (r == 0) r = 1;
  const int p = leading_one(r);                           // q in [2^(p-63), 2^(p-62)): octave 62 - p
  const std::uint64_t t = (r - (std::uint64_t{1} << p)) << (62 - p);  // the position within it, 62 bits
  const std::int32_t* row = table + (62 - p) * (kSteps + 1);
  const int m = static_cast<int>(t >> 56);
  const std::int64_t a = row[m], b = row[m + 1];         // a >= b: |z| falls as q grows
  const std::int64_t f = static_cast<std::int64_t>((t >> 24) & 0xFFFFFFFFu);
  const std::int64_t z = a - (((a - b) * f) >> 32);
  return (h >> 63) ? -z : z;
}

// Bits of v rounded to the dtype (16-bit patterns in the low half; f32 as its bit pattern).
FP_RNG_HD std::uint32_t to_bits(int dtype, double v) {
  if (dtype == 0) return bits16::f16(v);
  if (dtype == 1) return bits16::bf16(v);
  return bits16::bit_cast<std::uint32_t>(static_cast<float>(v));
}

FP_RNG_HD double from_bits(int dtype, std::uint32_t bits) {
  if (dtype == 0) return bits16::decode(5, 10, static_cast<std::uint16_t>(bits));
  if (dtype == 1) return bits16::decode(8, 7, static_cast<std::uint16_t>(bits));
  return static_cast<double>(bits16::bit_cast<float>(bits));
}

FP_RNG_HD bool is_zero(int dtype, std::uint32_t bits) { return (bits & (dtype == 2 ? 0x7FFFFFFFu : 0x7FFFu)) == 0; }

// The least positive normal number of the dtype with the sign of z (the fallback of kMaxAttempts).
FP_RNG_HD std::uint32_t least_normal(int dtype, std::int64_t z) {
  const std::uint32_t sign = z < 0 ? (dtype == 2 ? 0x80000000u : 0x8000u) : 0u;
  return sign | (dtype == 0 ? 0x0400u : dtype == 1 ? 0x0080u : 0x00800000u);
}

// A product and a sum rounded once each, never fused into one FMA (nvcc fuses a * b + c by default):
// the host and the device round the same way whatever the compiler's contraction setting.
FP_RNG_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#elif defined(__HIP_DEVICE_COMPILE__)
#pragma clang fp contract(off)  // HIP's __dmul_rn is a plain product that clang may fuse
  return a * b;
#else
  volatile double p = a * b;  // a stored product cannot be contracted into a following add
  return p;
#endif
}
FP_RNG_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#elif defined(__HIP_DEVICE_COMPILE__)
#pragma clang fp contract(off)
  return a + b;
#else
  return a + b;
#endif
}

FP_RNG_HD double scaled(std::int64_t z, double magnitude) {
  return static_cast<double>(z) * (magnitude * (1.0 / (1 << kZBits)));
}

// The plain draw of element `index` of `stream`: magnitude * N(0, 1) rounded to the dtype, never zero.
FP_RNG_HD std::uint32_t plain_bits(const Spec& s, std::uint32_t stream, std::uint64_t index, double magnitude,
                                   const std::int32_t* table) {
  std::int64_t z = 0;
  for (std::uint32_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
    z = normal(hash(s.seed, stream, index, attempt), table);
    const std::uint32_t bits = to_bits(s.dtype, scaled(z, magnitude));
    if (!is_zero(s.dtype, bits)) return bits;
  }
  return least_normal(s.dtype, z);
}

// Element `index` of K holding key j, dimension x, under the spec's key kind (near-identical and/or
// rising keys); the plain draw when the spec has neither.
FP_RNG_HD std::uint32_t key_bits(const Spec& s, std::uint64_t index, std::int64_t j, int x, const std::int32_t* table) {
  std::uint32_t bits = 0;
  if (s.key_jitter >= 0) {
    const std::int64_t zb = normal(hash(s.seed, kKeyBase, static_cast<std::uint64_t>(x), 0), table);
    const double base = mul_rn(static_cast<double>(zb), s.magnitude * (1.0 / (1 << kZBits)));
    std::int64_t z = 0;
    std::uint32_t attempt = 0;
    for (; attempt < kMaxAttempts; ++attempt) {
      z = normal(hash(s.seed, kK, index, attempt), table);
      bits = to_bits(s.dtype, add_rn(base, mul_rn(static_cast<double>(z), s.key_jitter * (1.0 / (1 << kZBits)))));
      if (!is_zero(s.dtype, bits)) break;
    }
    if (attempt == kMaxAttempts) bits = least_normal(s.dtype, z);
  } else {
    bits = plain_bits(s, kK, index, s.magnitude, table);
  }
  // |value| grows by the ramp: a nonzero value never rounds to zero.
  if (s.key_ramp > 0)
    bits = to_bits(s.dtype, mul_rn(from_bits(s.dtype, bits), add_rn(1.0, mul_rn(s.key_ramp, static_cast<double>(j)))));
  return bits;
}

// Whether K needs key_bits (per logical element) rather than the plain draw everywhere.
FP_RNG_HD bool keys_have_kind(const Spec& s) { return s.key_jitter >= 0 || s.key_ramp > 0; }

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// The quantile table on the host, built once (core/src/counter_inputs.cpp); the device fill uploads it.
const std::int32_t* normal_table();
#endif

}  // namespace flashprobe::counter_rng
