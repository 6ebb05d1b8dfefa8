#pragma once
// core's round_to (half.h) inlined for the oracle's per-element loops: the same functions
// (bits16::encode, then bits16::decode), so the same bits, without two out-of-line calls per element.
#include "flashprobe/core/bits16.h"
#include "flashprobe/core/dtype.h"

namespace flashprobe::oracle::detail {

inline double round_inline(DType t, double x) {
  switch (t) {
    case DType::f16: return bits16::decode(5, 10, bits16::encode(5, 10, x));
    case DType::bf16: return bits16::decode(8, 7, bits16::encode(8, 7, x));
    case DType::f32: return static_cast<double>(static_cast<float>(x));
  }
  return x;
}

}  // namespace flashprobe::oracle::detail
