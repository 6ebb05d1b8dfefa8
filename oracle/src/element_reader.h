#pragma once
// Fast reads of stored tensor elements as doubles: 16-bit types go through a 65536-entry table built
// once from core's exact conversions (Tensor::get per element costs a decode each time).
#include <cstdint>
#include <cstring>
#include <vector>

#include "flashprobe/core/half.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::oracle::detail {

inline const std::vector<double>& table16(DType t) {
  auto build = [](DType d) {
    std::vector<double> v(65536);
    for (std::uint32_t i = 0; i < 65536; ++i) v[i] = from_bits16(d, static_cast<std::uint16_t>(i));
    return v;
  };
  static const std::vector<double> f16 = build(DType::f16);
  static const std::vector<double> bf16 = build(DType::bf16);
  return t == DType::bf16 ? bf16 : f16;
}

class ElementReader {
 public:
  explicit ElementReader(const Tensor& t)
      : bytes_(t.bytes.data()), f32_(t.dtype == DType::f32), table_(f32_ ? nullptr : table16(t.dtype).data()) {}
  double operator()(std::int64_t i) const {
    if (f32_) {
      float f;
      std::memcpy(&f, bytes_ + 4 * i, 4);
      return f;
    }
    std::uint16_t h;
    std::memcpy(&h, bytes_ + 2 * i, 2);
    return table_[h];
  }

 private:
  const std::uint8_t* bytes_;
  bool f32_;
  const double* table_;
};

}  // namespace flashprobe::oracle::detail
