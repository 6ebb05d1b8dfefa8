#pragma once
// fp16 and bf16 host conversions: round to nearest, ties to even; NaN stays NaN (quiet), Inf keeps
// its sign, overflow goes to Inf, underflow to subnormals and signed zero.
//
// The rounding works directly from double, so `to_f16_bits(x)` is the correctly rounded fp16 of any
// double x (no double rounding through float). Tested exhaustively over all 65536 bit patterns.
#include <cstdint>

#include "flashprobe/core/dtype.h"

namespace flashprobe {

std::uint16_t to_f16_bits(double x);
std::uint16_t to_bf16_bits(double x);
double from_f16_bits(std::uint16_t h);
double from_bf16_bits(std::uint16_t h);

// bf16 by dropping the low 16 bits of the float (the classic bug; used by a mutant, never by flashprobe).
std::uint16_t to_bf16_bits_truncate(float x);

// Round a value to what `t` can store (f32 included), returned as a double.
double round_to(DType t, double x);
// Stored bits <-> value for 16-bit types; for f32 use the float itself.
double from_bits16(DType t, std::uint16_t bits);
std::uint16_t to_bits16(DType t, double x);

}  // namespace flashprobe
