#include "flashprobe/probes/elem_type.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "flashprobe/core/half.h"

namespace flashprobe::probes {

std::string_view elem_name(ElemType t) {
  switch (t) {
    case ElemType::f16: return "f16";
    case ElemType::bf16: return "bf16";
    case ElemType::f32: return "f32";
    case ElemType::s8: return "s8";
    case ElemType::s32: return "s32";
    case ElemType::e4m3: return "e4m3";
    case ElemType::e5m2: return "e5m2";
  }
  return "?";
}

std::optional<ElemType> parse_elem(std::string_view s) {
  for (ElemType t : {ElemType::f16, ElemType::bf16, ElemType::f32, ElemType::s8, ElemType::s32, ElemType::e4m3, ElemType::e5m2})
    if (elem_name(t) == s) return t;
  return std::nullopt;
}

namespace {
// All 126 positive finite E4M3 values in increasing order (bias 7, 3 mantissa bits, subnormals,
// S.1111.111 is NaN so the top value is 1.75 * 2^8 = 448).
const std::array<double, 126>& e4m3_positive() {
  static const auto table = [] {
    std::array<double, 126> v{};
    int n = 0;
    for (int bits = 1; bits < 0x7F; ++bits) {
      const int e = bits >> 3, m = bits & 7;
      v[n++] = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    }
    return v;
  }();
  return table;
}

double round_e4m3(double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  if (a == 0) return x;
  const auto& t = e4m3_positive();
  if (a > t.back()) {
    // Beyond 448 rounds to NaN unless it is within half an ulp of 448 (ulp at the top is 32).
    return a < t.back() + 16 ? std::copysign(t.back(), x) : std::numeric_limits<double>::quiet_NaN();
  }
  double lo = 0, hi = t.back();
  int lo_i = -1;
  for (int i = 0; i < 126; ++i)
    if (t[i] >= a) { hi = t[i]; lo = i ? t[i - 1] : 0; lo_i = i - 1; break; }
  double r;
  if (a - lo < hi - a) r = lo;
  else if (hi - a < a - lo) r = hi;
  else r = ((lo_i + 1) % 2 == 0) ? lo : hi;  // tie: the even bit pattern (index+1 is the pattern)
  return std::copysign(r, x);
}

// OCP E5M2: IEEE binary8 with 2 mantissa bits (bias 15, subnormals, infinities): round to nearest
// even at the value's binade, beyond 57344 + half an ulp (ulp 8192 at the top) to infinity.
double round_e5m2(double x) {
  if (std::isnan(x) || x == 0 || std::isinf(x)) return x;
  constexpr double kMax = 57344.0;
  const double a = std::fabs(x);
  if (a >= kMax + 4096) return std::copysign(std::numeric_limits<double>::infinity(), x);
  // Spacing of the values around a: 2^(exponent - 2), never below the subnormal spacing 2^-16.
  const int e = std::max(std::ilogb(a), -14);
  const double ulp = std::ldexp(1.0, e - 2);
  const double r = std::nearbyint(a / ulp) * ulp;  // nearbyint rounds ties to even
  return std::copysign(r, x);
}

bool exact_in_all(std::initializer_list<ElemType> types, double v) {
  return std::all_of(types.begin(), types.end(), [v](ElemType t) { return exact_in(t, v); });
}

double round_int(double x, double lo, double hi) {
  if (std::isnan(x)) return 0;
  const double r = std::nearbyint(x);
  return r < lo ? lo : r > hi ? hi : r;
}
}  // namespace

double round_to_elem(ElemType t, double x) {
  if (t == ElemType::e5m2) return round_e5m2(x);  // 9, 11, 13 and 15 are not e5m2 values
  // Small integers are exact in every other type here (the probe's values; keeps simulation fast).
  if (std::fabs(x) <= 16 && x == std::trunc(x)) return x;
  switch (t) {
    case ElemType::f16: return round_to(DType::f16, x);
    case ElemType::bf16: return round_to(DType::bf16, x);
    case ElemType::f32: return round_to(DType::f32, x);
    case ElemType::s8: return round_int(x, -128, 127);
    case ElemType::s32: return round_int(x, -2147483648.0, 2147483647.0);
    case ElemType::e4m3: return round_e4m3(x);
    case ElemType::e5m2: return round_e5m2(x);
  }
  return x;
}

std::vector<double> exact_values(std::initializer_list<ElemType> types, int count) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  // Integers first; every type here holds 1..16 exactly, so the loop ends quickly in practice.
  for (long n = 1; static_cast<int>(out.size()) < count && n <= (1L << 24); ++n) {
    for (double v : {static_cast<double>(n), -static_cast<double>(n)})
      if (exact_in_all(types, v) && static_cast<int>(out.size()) < count) out.push_back(v);
  }
  if (static_cast<int>(out.size()) < count)
    throw std::invalid_argument("exact_values: the element types cannot hold " + std::to_string(count) +
                                " distinct exact values (got " + std::to_string(out.size()) + ")");
  return out;
}

std::optional<double> exact_value_above(std::initializer_list<ElemType> types, double bound) {
  for (double v = std::max(0.0, std::floor(bound)) + 1; v <= 65536.0; ++v)
    if (exact_in_all(types, v)) return v;
  return std::nullopt;
}

}  // namespace flashprobe::probes
