#pragma once
// Exact element encodings used by the AMD atoms, for host and device alike (constexpr functions are
// implicitly host+device in HIP). The probe feeds every operand as float and the experiment kernel
// converts on the device, so these must be exact for every value the engine sends:
//   * bf16: round to nearest even from the float bits (the instruction takes the raw 16 bits);
//   * fp8 e4m3 FNUZ (gfx940/941/942): 1 sign, 4 exponent bits with bias 8, 3 mantissa bits, no
//     infinities, one NaN (0x80) and no negative zero; max 240, smallest subnormal 2^-10. This is
//     NOT the OCP e4m3fn format (bias 7, max 448) of gfx950/gfx12: 1.0 is 0x40 here, 0x38 there.
//     Sources: AMD CDNA3 ISA guide, section "Data types: FP8/BF8"; LLVM's APFloat
//     Float8E4M3FNUZ semantics (the type MLIR and LLVM use for gfx942's v_mfma_*_fp8_fp8).
//   * fp8 e4m3 OCP ("e4m3fn", gfx12 and gfx950): bias 7, 3 mantissa bits, no infinities, NaN is
//     S.1111.111 (0x7F, 0xFF), max 448, a negative zero (0x80). Source: the OCP 8-bit floating point
//     specification (OFP8) 1.0; AMD RDNA4 ISA guide, "Data types"; LLVM's APFloat Float8E4M3FN.
//   * bf8 e5m2 FNUZ (gfx940/941/942): 1 sign, 5 exponent bits with bias 16, 2 mantissa bits, no
//     infinities, one NaN (0x80), no negative zero; max 57344, smallest subnormal 2^-17. Sources: AMD
//     CDNA3 ISA guide, "Data types: FP8/BF8"; LLVM's APFloat Float8E5M2FNUZ.
//   * bf8 e5m2 OCP (gfx12 and gfx950): IEEE-like, bias 15, 2 mantissa bits, infinities S.11111.00,
//     NaN S.11111.{01,10,11}, a negative zero; max 57344. Source: OFP8 1.0; LLVM's Float8E5M2.
// Example:  bf16_bits(1.5f) == 0x3FC0;  e4m3fnuz_bits(1.0f) == 0x40;  e4m3fnuz_value(0x40) == 1.0f;
//           e4m3_bits(1.0f) == 0x38;  e4m3_value(0x7E) == 448.0f;  e5m2_bits(1.0f) == 0x3C;
//           e5m2fnuz_bits(1.0f) == 0x40;  e5m2_value(0x7C) == +infinity
#include <cstdint>

namespace fp_amd {

constexpr std::uint16_t bf16_bits(float x) {
  const auto u = __builtin_bit_cast(std::uint32_t, x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);                               // ties to even
  return static_cast<std::uint16_t>(rounded >> 16);
}
constexpr float bf16_value(std::uint16_t bits) {
  return __builtin_bit_cast(float, static_cast<std::uint32_t>(bits) << 16);
}

// The fp8 codes S.E..E.M..M with kMant mantissa bits (e4m3: 3, e5m2: 2) and exponent bias kBias.
// |value| of the low 7 bits: subnormal m * 2^(1 - bias - kMant), normal (2^kMant + m) *
// 2^(e - bias - kMant), both exact in float. The formats differ only in bias, NaN, infinity and zero.
template <int kMant, int kBias>
constexpr float fp8_magnitude(std::uint8_t bits) {
  const int e = (bits & 0x7F) >> kMant, m = bits & ((1 << kMant) - 1);
  float v = static_cast<float>(e == 0 ? m : (1 << kMant) + m);
  int exp2 = (e == 0 ? 1 : e) - kBias - kMant;
  for (; exp2 > 0; --exp2) v *= 2.0f;
  for (; exp2 < 0; ++exp2) v *= 0.5f;
  return v;
}
// The magnitude code in [0, kCodes) nearest to a >= 0, ties to the even code. A scan keeps this
// obviously right; the probe converts a few thousand values per launch, so speed does not matter.
template <int kMant, int kBias, int kCodes>
constexpr int nearest_fp8_code(float a) {
  int best = 0;
  float best_err = a;
  for (int code = 1; code < kCodes; ++code) {
    const float err = fp8_magnitude<kMant, kBias>(static_cast<std::uint8_t>(code)) - a;
    const float abs_err = err < 0.0f ? -err : err;
    if (abs_err < best_err || (abs_err == best_err && (code & 1) == 0)) {
      best = code;
      best_err = abs_err;
    }
  }
  return best;
}
constexpr bool sign_bit(float x) { return (__builtin_bit_cast(std::uint32_t, x) >> 31) != 0; }

inline constexpr std::uint8_t kE4m3fnuzNaN = 0x80;
inline constexpr float kE4m3fnuzMax = 240.0f;

constexpr float e4m3fnuz_value(std::uint8_t bits) {
  if (bits == kE4m3fnuzNaN) return __builtin_nanf("");
  const float v = fp8_magnitude<3, 8>(bits);
  return (bits & 0x80) ? -v : v;
}

// Round to nearest, ties to even mantissa; |x| beyond the largest finite value rounds to it when
// closer than half an ulp above, else to NaN (the format has no infinity); NaN stays NaN.
constexpr std::uint8_t e4m3fnuz_bits(float x) {
  if (x != x) return kE4m3fnuzNaN;
  const bool neg = x < 0.0f;
  const float a = neg ? -x : x;
  if (a >= kE4m3fnuzMax + 8.0f) return kE4m3fnuzNaN;  // 248 = max + half ulp (ulp 16 at the top)
  const int best = nearest_fp8_code<3, 8, 128>(a);
  if (best == 0) return 0;  // no negative zero in FNUZ: -0 and tiny negatives encode as +0
  return static_cast<std::uint8_t>(neg ? (best | 0x80) : best);
}

inline constexpr std::uint8_t kE4m3NaN = 0x7F;
inline constexpr float kE4m3Max = 448.0f;

constexpr float e4m3_value(std::uint8_t bits) {
  if ((bits & 0x7F) == kE4m3NaN) return __builtin_nanf("");
  const float v = fp8_magnitude<3, 7>(bits);
  return (bits & 0x80) ? -v : v;
}

// Round to nearest, ties to even mantissa; beyond 448 + half an ulp (ulp 32 at the top) -> NaN (no
// infinity); NaN stays NaN; the sign of zero is kept.
constexpr std::uint8_t e4m3_bits(float x) {
  if (x != x) return kE4m3NaN;
  const bool neg = sign_bit(x);
  const float a = neg ? -x : x;
  if (a >= kE4m3Max + 16.0f) return static_cast<std::uint8_t>(neg ? 0xFF : kE4m3NaN);
  const int best = nearest_fp8_code<3, 7, 0x7F>(a);
  return static_cast<std::uint8_t>(neg ? (best | 0x80) : best);
}

inline constexpr std::uint8_t kE5m2fnuzNaN = 0x80;
inline constexpr float kE5m2Max = 57344.0f;  // both e5m2 formats: 1.75 * 2^15

constexpr float e5m2fnuz_value(std::uint8_t bits) {
  if (bits == kE5m2fnuzNaN) return __builtin_nanf("");
  const float v = fp8_magnitude<2, 16>(bits);
  return (bits & 0x80) ? -v : v;
}

// Round to nearest, ties to even mantissa; from max + half an ulp (ulp 2^13 at the top) -> NaN (no
// infinity); NaN stays NaN; -0 and tiny negatives encode as +0 (no negative zero).
constexpr std::uint8_t e5m2fnuz_bits(float x) {
  if (x != x) return kE5m2fnuzNaN;
  const bool neg = x < 0.0f;
  const float a = neg ? -x : x;
  if (a >= kE5m2Max + 4096.0f) return kE5m2fnuzNaN;
  const int best = nearest_fp8_code<2, 16, 128>(a);
  if (best == 0) return 0;
  return static_cast<std::uint8_t>(neg ? (best | 0x80) : best);
}

inline constexpr std::uint8_t kE5m2Inf = 0x7C, kE5m2NaN = 0x7F;

constexpr float e5m2_value(std::uint8_t bits) {
  const int low = bits & 0x7F;
  if (low > kE5m2Inf) return __builtin_nanf("");
  const float v = low == kE5m2Inf ? __builtin_inff() : fp8_magnitude<2, 15>(bits);
  return (bits & 0x80) ? -v : v;
}

// Round to nearest, ties to even mantissa (IEEE): from max + half an ulp on -> infinity; NaN stays
// NaN; the sign of zero is kept.
constexpr std::uint8_t e5m2_bits(float x) {
  if (x != x) return kE5m2NaN;
  const bool neg = sign_bit(x);
  const float a = neg ? -x : x;
  const int code = a >= kE5m2Max + 4096.0f ? kE5m2Inf : nearest_fp8_code<2, 15, kE5m2Inf>(a);
  return static_cast<std::uint8_t>(neg ? (code | 0x80) : code);
}

}  // namespace fp_amd
