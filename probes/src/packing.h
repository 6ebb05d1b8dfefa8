#pragma once
// Packed singles for the probe engine's P1 (plan in flashprobe/probes/engine.h), and the effect of
// one experiment on the used D slots.
//
// A single sets one A (B) slot to 1 under an all-ones other operand and C = 0: D is 1 on the row
// (column) the slot's element feeds. A pack sets up to `width` slots of the same operand at once,
// member j holding 2^j. With exact arithmetic every D value is then an integer whose bit j says
// whether member j lit that D slot, so one experiment gives the effect of `width` singles:
//
//   const auto packs = make_packs(A.n, pack_width(ElemType::f16, ElemType::f32));  // 16 per pack
//   a[packs[p][j]] = std::ldexp(1.0, j);                                             // B = 1, C = 0
//   const Decoded dec = decode(d, used, static_cast<int>(packs[p].size()));
//   if (trusted(dec, full)) ... member j's effect is dec.members[j] ...
//   else                    ... run every member of packs[p] again as a plain single ...
//
// Decoding is strict: a used D value that is not an integer in [0, 2^width) (NaN, a fraction, a
// negative or too large value) makes the pack bad. Only a pack with nothing bad whose members each
// light nothing or exactly `full` D slots (one whole row or column) is trusted; anything else -- two
// copies of a replicated element disagreeing, a lone copy giving a partial or undefined result, a
// short row -- is what the singles must classify, so the engine re-runs those packs as singles.
#include <vector>

#include "flashprobe/probes/elem_type.h"

namespace flashprobe::probes::packing {

// What one experiment did to the used D slots, when each is expected to be 0 or `one`.
struct Effect {
  std::vector<int> lit;  // D slots equal to `one`, ascending
  int bad = 0;           // D slots holding neither 0 nor `one`
  int bad_slot = -1;     // the first of them, and its value
  double bad_value = 0;
};
Effect effect(const double* d, const std::vector<char>& used, double one);

// Widest pack (at most `cap`) whose member values 2^0 .. 2^(w-1) are exact in the operand type and
// whose sums, every integer below 2^w, are exact in the accumulator type. A member meets one
// all-ones element of the other operand per D slot it lights, so no sum exceeds 2^w - 1.
//   f16 -> f32: 16 (the cap), f16 -> f16: 11, bf16 -> f32: 16, e4m3 -> f32: 9, s8 -> s32: 7.
int pack_width(ElemType operand, ElemType accumulator, int cap = 16);

// `n` slots dealt into packs of at most `width` members: pack p holds p, p + P, p + 2P, ... for P
// packs, P odd when there is more than one. Slots a power of two apart (as replicas related by one
// lane or slot bit are, when the slot count is a power of two) never share a pack.
std::vector<std::vector<int>> make_packs(int n, int width);

struct Decoded {
  std::vector<Effect> members;  // member j: the used D slots whose bit j is set (bad stays 0)
  int bad = 0;                  // used D slots that are no sum of distinct members
  int bad_slot = -1;            // the first of them, and its value
  double bad_value = 0;
};
// @pre used.size() covers the D slots of d; 1 <= width <= 30
Decoded decode(const double* d, const std::vector<char>& used, int width);

// Nothing bad, and every member lights no D slot or exactly `full` of them.
bool trusted(const Decoded& p, int full);

}  // namespace flashprobe::probes::packing
