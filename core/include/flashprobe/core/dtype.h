#pragma once
// Element types of attention inputs and outputs, with their names in JSON, NPY and on the CLI.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace flashprobe {

enum class DType { f16, bf16, f32 };

constexpr std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
  }
  return "?";
}
// The names dtype_name writes, exactly (f16, bf16, f32): no aliases such as half or float16.
std::optional<DType> parse_dtype(std::string_view s);
// Machine epsilon (2^-mantissa bits): 2^-10, 2^-7, 2^-23.
constexpr double dtype_eps(DType t) {
  return t == DType::f16 ? 1.0 / 1024 : t == DType::bf16 ? 1.0 / 128 : 1.0 / 8388608;
}

}  // namespace flashprobe
