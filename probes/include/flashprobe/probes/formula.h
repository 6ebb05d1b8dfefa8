#pragma once
// Formula inference: is a layout linear over GF(2), and if so, which shifts and masks print it.
//
// Write the hardware index as a bit vector x = (slot bits, lane bits) and the logical index as
// y = (row bits, col bits). The layout is *linear* when there are basis images b_i (one per input
// bit) with y(x) = XOR of b_i over the set bits of x, for every slot that is not ignored. This is the
// view Triton's LinearLayout takes, and it is why the map goes hardware -> logical: a replicated lane
// bit simply has the image 0 (it changes no element), which the opposite direction cannot express.
// Bits that never vary among the used slots (e.g. slot bit 0 when only odd slots are used) get the
// image 0 too; ignored slots are outside the domain.
//
// Worked example (RDNA3 WMMA C/D, wave32, 8 slots): slot bits s0..s2, lane bits l0..l4.
//   images: s0 -> row 2, s1 -> row 4, s2 -> row 8, l0..l3 -> col 1, 2, 4, 8, l4 -> row 1
//   printed: "row = 2*slot + (lane >> 4); col = lane & 15"
// Each output bit takes its input bits in "layers"; within a layer every output bit has at most one
// input bit, so the layer is a sum of disjoint shifted fields; layers are XORed ("^").
// eval_expr() evaluates what the printer prints (C precedence), so printing is testable.
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/probes/layout.h"

namespace flashprobe::probes {

struct LinearMap {
  bool linear = false;
  std::string reason;             // why not linear (first counterexample), empty when linear
  int slot_bits = 0, lane_bits = 0;
  std::vector<Coord> slot_image;  // image (row bits, col bits as integers) of slot bit i
  std::vector<Coord> lane_image;  // image of lane bit i
};
// @post linear  =>  for every used (lane, slot): at(lane, slot) == XOR of images of its set bits.
LinearMap infer_linear(const OperandLayout& l);

struct Formula {
  bool linear = false;
  std::string row, col;  // C expressions in `lane` and `slot` (empty when not linear)
  std::string reason;    // when not linear
  // "row = ...; col = ..." or "not linear over GF(2) (<reason>)"
  std::string text() const;
};
Formula formula(const OperandLayout& l);

// Evaluate an expression of the printed form: integers, `lane`, `slot`, ( ), * + - << >> & ^ |
// with C precedence. Throws std::invalid_argument naming the position on a syntax error.
long eval_expr(std::string_view expr, long lane, long slot);

}  // namespace flashprobe::probes
