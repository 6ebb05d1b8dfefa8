#pragma once
// Helpers for the expected_*.cpp files: each file adds the atoms of one architecture family.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/atoms/layouts.h"
#include "flashprobe/probes/atom.h"

namespace flashprobe::probes::detail {

// An atom layout's operand tables (flashprobe/atoms/*_layout.h): the registry declares what the
// atom module states, never a copy of it.
template <class F>
OperandLayout from_atom(int rows, int cols, int lanes, int slots, F f) {
  return OperandLayout::from_function(rows, cols, lanes, slots, [&](int lane, int slot) {
    const atoms::Coord c = f(lane, slot);
    return Coord{c.row, c.col};
  });
}
template <class L>
MmaLayout layout_of() {
  return {from_atom(L::M, L::K, L::kWave, L::kA, [](int l, int s) { return L::a(l, s); }),
          from_atom(L::K, L::N, L::kWave, L::kB, [](int l, int s) { return L::b(l, s); }),
          from_atom(L::M, L::N, L::kWave, L::kC, [](int l, int s) { return L::c(l, s); })};
}
template <class Ld>
OperandLayout load_layout_of() {
  return from_atom(Ld::kRows, Ld::kCols, Ld::kWave, Ld::kSlots, [](int l, int s) { return Ld::at(l, s); });
}
template <std::size_t N>
std::vector<std::string> target_list(const std::array<std::string_view, N>& list) {
  return {list.begin(), list.end()};
}

void add_nvidia_atoms(std::vector<AtomDesc>& mma, std::vector<LoadAtomDesc>& load);
void add_rdna3_atoms(std::vector<AtomDesc>& mma);
void add_rdna4_atoms(std::vector<AtomDesc>& mma);
void add_cdna_atoms(std::vector<AtomDesc>& mma);

}  // namespace flashprobe::probes::detail
