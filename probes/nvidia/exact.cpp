#include "exact.h"

#include <cmath>

#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"

namespace flashprobe::nvidia {

namespace {
bool holds(ExactKind kind, float x) {
  switch (kind) {
    case ExactKind::f16: return from_f16_bits(to_f16_bits(x)) == static_cast<double>(x);
    case ExactKind::bf16: return from_bf16_bits(to_bf16_bits(x)) == static_cast<double>(x);
    case ExactKind::s8: return x == std::nearbyint(x) && x >= -128.0f && x <= 127.0f;
    // s32 travels as float: integers beyond 2^24 would already have been rounded by the caller.
    case ExactKind::s32: return x == std::nearbyint(x) && std::fabs(x) <= 16777216.0f;
    case ExactKind::f32: return std::isfinite(x);
  }
  return false;
}
const char* kind_name(ExactKind k) {
  switch (k) {
    case ExactKind::f16: return "f16";
    case ExactKind::bf16: return "bf16";
    case ExactKind::s8: return "s8";
    case ExactKind::s32: return "s32 (integers up to 2^24)";
    case ExactKind::f32: return "f32 (finite)";
  }
  return "?";
}
}  // namespace

void require_exact(ExactKind kind, std::span<const float> v, const std::string& what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!holds(kind, v[i]))
      throw UsageError(what + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) + " is not exact in " +
                       kind_name(kind) + ": probe experiments must use values the element type stores exactly");
}

void require_size(std::span<const float> v, std::size_t expected, const std::string& what) {
  if (v.size() != expected)
    throw UsageError(what + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(expected));
}

}  // namespace flashprobe::nvidia
