#include "flashprobe/core/half.h"

#include "flashprobe/core/bits16.h"

#include <cstring>

namespace flashprobe {

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : {DType::f16, DType::bf16, DType::f32})
    if (s == dtype_name(t)) return t;
  return std::nullopt;
}

// The rounding and decoding are bits16.h's (integer operations, shared with device code).
std::uint16_t to_f16_bits(double x) { return bits16::f16(x); }
std::uint16_t to_bf16_bits(double x) { return bits16::bf16(x); }
double from_f16_bits(std::uint16_t h) { return bits16::decode(5, 10, h); }
double from_bf16_bits(std::uint16_t h) { return bits16::decode(8, 7, h); }

std::uint16_t to_bf16_bits_truncate(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return static_cast<std::uint16_t>(u >> 16);
}

double from_bits16(DType t, std::uint16_t bits) {
  return t == DType::bf16 ? from_bf16_bits(bits) : from_f16_bits(bits);
}
std::uint16_t to_bits16(DType t, double x) { return t == DType::bf16 ? to_bf16_bits(x) : to_f16_bits(x); }

double round_to(DType t, double x) {
  switch (t) {
    case DType::f16: return from_f16_bits(to_f16_bits(x));
    case DType::bf16: return from_bf16_bits(to_bf16_bits(x));
    case DType::f32: return static_cast<double>(static_cast<float>(x));
  }
  return x;
}

}  // namespace flashprobe
