#pragma once
// Element types of matrix-instruction operands, and the values the probe engine may use with them.
//
// The engine reads a layout from exact arithmetic: a D value must be *exactly* one of the sums an
// experiment can produce, or it is an anomaly. So every value placed in A, B or C must be stored
// exactly by the operand's type, and every sum must be exact in the accumulator. `exact_values`
// hands out such values, smallest magnitude first:
//
//   exact_values({ElemType::e4m3}, 20)  ->  1, -1, 2, -2, ..., 10, -10
//   exact_values({ElemType::e4m3}, 40)  ->  ... 16, -16, 18, -18, 20, ...   (17 is not an e4m3 value)
//
// Ranges that matter: integers are exact up to 2048 in f16, 256 in bf16, 16 in e4m3 (then every
// second, fourth, ... integer up to 448), 8 in e5m2 (then 10, 12, 14, 16, 20, ... up to 57344),
// -128..127 in s8.
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace flashprobe::probes {

// f16, bf16, f32: IEEE-style; s8/s32: two's complement integers; e4m3: OCP FP8 E4M3 ("fn": no
// infinities, max 448); e5m2: OCP FP8 E5M2 (IEEE-like, infinities, max 57344).
enum class ElemType { f16, bf16, f32, s8, s32, e4m3, e5m2 };

std::string_view elem_name(ElemType t);
std::optional<ElemType> parse_elem(std::string_view s);

// What storing x in `t` gives (round to nearest even; integers saturate; e4m3 out of range -> NaN,
// e5m2 -> infinity).
double round_to_elem(ElemType t, double x);
inline bool exact_in(ElemType t, double x) { return round_to_elem(t, x) == x; }

// `count` distinct nonzero values, each exact in every type of `types`, ordered 1, -1, 2, -2, ...
// skipping values some type cannot hold. Throws std::invalid_argument when the types cannot supply
// that many (e.g. more than 255 for s8).
std::vector<double> exact_values(std::initializer_list<ElemType> types, int count);

// The smallest positive integer above `bound` that every type of `types` holds exactly (e4m3: 36 above 32);
// nullopt when there is none up to 2^16 (s8 above 127).
std::optional<double> exact_value_above(std::initializer_list<ElemType> types, double bound);

}  // namespace flashprobe::probes
