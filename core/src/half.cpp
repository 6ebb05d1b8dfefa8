#include "flashprobe/core/half.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace flashprobe {

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : {DType::f16, DType::bf16, DType::f32})
    if (s == dtype_name(t)) return t;
  return std::nullopt;
}

namespace {

// A binary floating-point format with E exponent bits and M stored mantissa bits (16 bits here).
struct Format {
  int ebits, mbits;
  int bias() const { return (1 << (ebits - 1)) - 1; }
  std::uint32_t exp_mask() const { return (1u << ebits) - 1; }
};
constexpr Format kF16{5, 10};
constexpr Format kBF16{8, 7};

std::uint16_t encode_generic(Format f, double x);

// Round to nearest even on the double's bits when the value is a normal number of the format
// (the common case: random inputs, kernel outputs); everything else takes the generic path.
std::uint16_t encode(Format f, double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, 8);
  const int e = static_cast<int>((u >> 52) & 0x7FF) - 1023;
  if (e < 1 - f.bias() || e > f.bias()) return encode_generic(f, x);  // zero, subnormal, overflow, inf, NaN
  const int shift = 52 - f.mbits;
  const std::uint64_t m = u & ((std::uint64_t{1} << 52) - 1);
  std::uint64_t keep = m >> shift;
  const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (keep & 1))) ++keep;
  std::uint32_t biased = static_cast<std::uint32_t>(e + f.bias());
  if (keep >> f.mbits) {  // the mantissa rounded up to the next power of two
    keep = 0;
    ++biased;
  }
  const std::uint32_t sign = static_cast<std::uint32_t>(u >> 63) << (f.ebits + f.mbits);
  if (biased >= f.exp_mask()) return static_cast<std::uint16_t>(sign | (f.exp_mask() << f.mbits));  // rounds to inf
  return static_cast<std::uint16_t>(sign | (biased << f.mbits) | static_cast<std::uint32_t>(keep));
}

std::uint16_t encode_generic(Format f, double x) {
  const std::uint32_t sign = std::signbit(x) ? 1u << (f.ebits + f.mbits) : 0u;
  const std::uint32_t inf = f.exp_mask() << f.mbits;
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | inf | (1u << (f.mbits - 1)));  // quiet NaN
  const double a = std::fabs(x);
  if (std::isinf(a)) return static_cast<std::uint16_t>(sign | inf);
  if (a == 0.0) return static_cast<std::uint16_t>(sign);
  const int emin = 1 - f.bias();
  const int e = std::max(std::ilogb(a), emin);
  // Scaling by a power of two is exact; nearbyint rounds to nearest even in the default mode.
  const double q = std::nearbyint(std::ldexp(a, f.mbits - e));
  const double r = std::ldexp(q, e - f.mbits);
  if (std::ilogb(r) > f.bias()) return static_cast<std::uint16_t>(sign | inf);
  if (r < std::ldexp(1.0, emin))  // subnormal (or rounded to zero)
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::ldexp(r, f.mbits - emin)));
  const int er = std::ilogb(r);
  const auto mant = static_cast<std::uint32_t>(std::ldexp(r, f.mbits - er)) - (1u << f.mbits);
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(er + f.bias()) << f.mbits) | mant);
}

double decode_generic(Format f, std::uint16_t bits);

// Normal numbers straight onto the double's bits; zero, subnormals, inf and NaN the generic way.
double decode(Format f, std::uint16_t bits) {
  const std::uint32_t e = (bits >> f.mbits) & f.exp_mask();
  if (e == 0 || e == f.exp_mask()) return decode_generic(f, bits);
  const std::uint64_t sign = static_cast<std::uint64_t>((bits >> (f.ebits + f.mbits)) & 1u) << 63;
  const std::uint64_t exp = static_cast<std::uint64_t>(static_cast<int>(e) - f.bias() + 1023) << 52;
  const std::uint64_t mant = static_cast<std::uint64_t>(bits & ((1u << f.mbits) - 1)) << (52 - f.mbits);
  const std::uint64_t u = sign | exp | mant;
  double v;
  std::memcpy(&v, &u, 8);
  return v;
}

double decode_generic(Format f, std::uint16_t bits) {
  const bool neg = (bits >> (f.ebits + f.mbits)) & 1u;
  const std::uint32_t e = (bits >> f.mbits) & f.exp_mask();
  const std::uint32_t m = bits & ((1u << f.mbits) - 1);
  double v;
  if (e == f.exp_mask()) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0) v = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mbits);
  else v = std::ldexp(static_cast<double>(m | (1u << f.mbits)), static_cast<int>(e) - f.bias() - f.mbits);
  return neg ? -v : v;
}

}  // namespace

std::uint16_t to_f16_bits(double x) { return encode(kF16, x); }
std::uint16_t to_bf16_bits(double x) { return encode(kBF16, x); }
double from_f16_bits(std::uint16_t h) { return decode(kF16, h); }
double from_bf16_bits(std::uint16_t h) { return decode(kBF16, h); }

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
