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
// Example:  bf16_bits(1.5f) == 0x3FC0;  e4m3fnuz_bits(1.0f) == 0x40;  e4m3fnuz_value(0x40) == 1.0f;
//           e4m3_bits(1.0f) == 0x38;  e4m3_value(0x7E) == 448.0f
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

// Both fp8 e4m3 formats share the code layout S.EEEE.MMM and differ in bias, NaN and zero.
// |value| of the low 7 bits: subnormal m * 2^(1 - bias - 3), normal (8 + m) * 2^(e - bias - 3),
// both exact in float.
template <int kBias>
constexpr float e4m3_magnitude(std::uint8_t bits) {
  const int e = (bits >> 3) & 15, m = bits & 7;
  float v = static_cast<float>(e == 0 ? m : 8 + m);
  int exp2 = (e == 0 ? 1 : e) - kBias - 3;
  for (; exp2 > 0; --exp2) v *= 2.0f;
  for (; exp2 < 0; ++exp2) v *= 0.5f;
  return v;
}
// The magnitude code in [0, kCodes) nearest to a >= 0, ties to the even code. A scan keeps this
// obviously right; the probe converts a few thousand values per launch, so speed does not matter.
template <int kBias, int kCodes>
constexpr int nearest_e4m3_code(float a) {
  int best = 0;
  float best_err = a;
  for (int code = 1; code < kCodes; ++code) {
    const float err = e4m3_magnitude<kBias>(static_cast<std::uint8_t>(code)) - a;
    const float abs_err = err < 0.0f ? -err : err;
    if (abs_err < best_err || (abs_err == best_err && (code & 1) == 0)) {
      best = code;
      best_err = abs_err;
    }
  }
  return best;
}

inline constexpr std::uint8_t kE4m3fnuzNaN = 0x80;
inline constexpr float kE4m3fnuzMax = 240.0f;

constexpr float e4m3fnuz_value(std::uint8_t bits) {
  if (bits == kE4m3fnuzNaN) return __builtin_nanf("");
  const float v = e4m3_magnitude<8>(bits);
  return (bits & 0x80) ? -v : v;
}

// Round to nearest, ties to even mantissa; |x| beyond the largest finite value rounds to it when
// closer than half an ulp above, else to NaN (the format has no infinity); NaN stays NaN.
constexpr std::uint8_t e4m3fnuz_bits(float x) {
  if (x != x) return kE4m3fnuzNaN;
  const bool neg = x < 0.0f;
  const float a = neg ? -x : x;
  if (a >= kE4m3fnuzMax + 8.0f) return kE4m3fnuzNaN;  // 248 = max + half ulp (ulp 16 at the top)
  const int best = nearest_e4m3_code<8, 128>(a);
  if (best == 0) return 0;  // no negative zero in FNUZ: -0 and tiny negatives encode as +0
  return static_cast<std::uint8_t>(neg ? (best | 0x80) : best);
}

inline constexpr std::uint8_t kE4m3NaN = 0x7F;
inline constexpr float kE4m3Max = 448.0f;

constexpr float e4m3_value(std::uint8_t bits) {
  if ((bits & 0x7F) == kE4m3NaN) return __builtin_nanf("");
  const float v = e4m3_magnitude<7>(bits);
  return (bits & 0x80) ? -v : v;
}

// Round to nearest, ties to even mantissa; beyond 448 + half an ulp (ulp 32 at the top) -> NaN (no
// infinity); NaN stays NaN; the sign of zero is kept.
constexpr std::uint8_t e4m3_bits(float x) {
  if (x != x) return kE4m3NaN;
  const bool neg = (__builtin_bit_cast(std::uint32_t, x) >> 31) != 0;
  const float a = neg ? -x : x;
  if (a >= kE4m3Max + 16.0f) return static_cast<std::uint8_t>(neg ? 0xFF : kE4m3NaN);
  const int best = nearest_e4m3_code<7, 0x7F>(a);
  return static_cast<std::uint8_t>(neg ? (best | 0x80) : best);
}

}  // namespace fp_amd
