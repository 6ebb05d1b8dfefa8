#pragma once
// Layouts are values: where each element of a matrix-instruction operand lives in a wave's registers.
//
// An OperandLayout is the full table (lane, slot) -> (row, col) for one operand: A (M x K), B (K x N)
// or C/D (M x N; C and D share one layout, D = C + A*B). A *slot* is the element index within the
// lane's fragment, counted in elements, not registers: a 32-bit register that packs two 16-bit
// elements holds slots 2r (low half) and 2r+1 (high half). So packing is explicit and the same for
// every vendor: an f16 accumulator written to the low halves only (RDNA3 OPSEL=0) has its odd slots
// ignored.
//
// Direction: hardware -> logical, as in Triton's LinearLayout. Each (lane, slot) maps to at most one
// element, so the map stays a function when hardware holds the same element in several places:
//   - a *replica* is a slot that maps to the same element as an earlier slot (lane-major order:
//     lane 0 slots 0.., lane 1 slots 0.., ...); it "replicates" that first slot, the primary;
//   - an *ignored* slot maps to nothing (the instruction does not read it / does not write it).
// The logical -> hardware direction would need a set per element and could not express either.
//
// Worked example: RDNA3 v_wmma_f32_16x16x16_f16 in wave32, C/D operand (8 f32 slots per lane):
//   row = 2*slot + (lane >> 4); col = lane & 15
// and its A operand (16 f16 slots per lane): row = lane & 15; col = slot, where lanes 16..31 are
// replicas of lanes 0..15 (the ISA requires them to hold the same data).
//
//   grid(layout.c, "C")  prints  rows x cols cells "T05V2" = lane 5, slot 2, as in vendor ISA figures;
//   formula(layout.c)    prints  "row = 2*slot + (lane >> 4); col = lane & 15"  (see formula.h);
//   diff(expected, derived) names every slot that disagrees.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace flashprobe::probes {

// A matrix position, or "ignored" (row = col = -1).
struct Coord {
  int row = -1, col = -1;
  constexpr bool ignored() const { return row < 0; }
  friend constexpr bool operator==(Coord, Coord) = default;
  friend constexpr auto operator<=>(Coord, Coord) = default;
};
inline constexpr Coord kIgnored{};
std::string to_string(Coord c);  // "(3, 12)" or "ignored"

enum class Operand { A, B, C };
std::string_view operand_name(Operand op);  // "A", "B", "C/D"

class OperandLayout {
 public:
  OperandLayout() = default;
  // rows x cols matrix held by `lanes` lanes with `slots` elements each; every slot starts ignored.
  OperandLayout(int rows, int cols, int lanes, int slots);
  // Fill from f(lane, slot) -> Coord.
  template <class F>
  static OperandLayout from_function(int rows, int cols, int lanes, int slots, F&& f) {
    OperandLayout l(rows, cols, lanes, slots);
    for (int lane = 0; lane < lanes; ++lane)
      for (int slot = 0; slot < slots; ++slot) l.set(lane, slot, f(lane, slot));
    return l;
  }

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int lanes() const { return lanes_; }
  int slots() const { return slots_; }
  int size() const { return lanes_ * slots_; }  // number of (lane, slot) pairs
  int flat(int lane, int slot) const { return lane * slots_ + slot; }

  Coord at(int lane, int slot) const { return table_[static_cast<std::size_t>(flat(lane, slot))]; }
  Coord at_flat(int i) const { return table_[static_cast<std::size_t>(i)]; }
  // @pre c is ignored or inside rows x cols (throws std::out_of_range otherwise).
  void set(int lane, int slot, Coord c);
  void set_flat(int i, Coord c) { set(i / slots_, i % slots_, c); }

  // holders()[row * cols + col] = flat indices holding that element, increasing (primary first).
  std::vector<std::vector<int>> holders() const;
  // The primary slot (flat index) that (lane, slot) replicates; nullopt for primaries and ignored.
  std::optional<int> replica_of(int lane, int slot) const;
  std::vector<int> ignored() const;                     // flat indices
  std::vector<std::vector<int>> replica_groups() const;  // groups of >= 2 flat indices
  bool covers_all() const;  // every element held at least once
  bool injective() const;   // no element held twice

  friend bool operator==(const OperandLayout&, const OperandLayout&) = default;

 private:
  int rows_ = 0, cols_ = 0, lanes_ = 0, slots_ = 0;
  std::vector<Coord> table_;
};

// One matrix instruction: A (M x K), B (K x N), C/D (M x N).
struct MmaLayout {
  OperandLayout a, b, c;
  const OperandLayout& operand(Operand op) const { return op == Operand::A ? a : op == Operand::B ? b : c; }
  OperandLayout& operand(Operand op) { return op == Operand::A ? a : op == Operand::B ? b : c; }
  friend bool operator==(const MmaLayout&, const MmaLayout&) = default;
};

// ---- comparison -------------------------------------------------------------------------------
struct SlotDiff {
  Operand op;
  int lane, slot;
  Coord expected, derived;
};
// Every (lane, slot) where the two disagree. @pre same shapes (throws std::invalid_argument).
std::vector<SlotDiff> diff(const OperandLayout& expected, const OperandLayout& derived, Operand op);
std::vector<SlotDiff> diff(const MmaLayout& expected, const MmaLayout& derived);
// "A T05V2: expected (5, 4), derived (5, 12)" one per line, at most max_lines then "... N more".
std::string format_diff(const std::vector<SlotDiff>& d, std::size_t max_lines = 32);

// ---- printing ---------------------------------------------------------------------------------
// One grid: `rows` lines of `cols` cells; each cell names the primary holder as T<lane>V<slot>, a
// '+' marks an element that also has replicas, "-----" an element nobody holds. Below the grid:
// the replica groups and ignored slots, summarised.
std::string grid(const OperandLayout& l, std::string_view title);
std::string grid(const MmaLayout& l);

// ---- JSON -------------------------------------------------------------------------------------
// {"rows", "cols", "lanes", "slots", "table": [[row, col] or null per slot, lane-major]}
void to_json(nlohmann::json& j, const OperandLayout& l);
void from_json(const nlohmann::json& j, OperandLayout& l);  // throws flashprobe::UsageError on bad input
// {"A": ..., "B": ..., "C": ...}
void to_json(nlohmann::json& j, const MmaLayout& l);
void from_json(const nlohmann::json& j, MmaLayout& l);

// ---- C++ emission -----------------------------------------------------------------------------
// A self-contained snippet: a constexpr table `k<Name>` of {row, col} per (lane, slot) ({-1, -1} =
// ignored) and `constexpr Coord <name>(int lane, int slot)`; when the map is GF(2)-linear the
// function evaluates the formula instead of reading the table (the table stays, for checking).
std::string emit_constexpr(const OperandLayout& l, std::string_view name);
std::string emit_constexpr(const MmaLayout& l, std::string_view name);  // name_a, name_b, name_c

}  // namespace flashprobe::probes
