#pragma once
// Helpers for the expected_*.cpp files: each file adds the atoms of one architecture family.
#include <string>
#include <vector>

#include "flashprobe/probes/atom.h"

namespace flashprobe::probes::detail {

template <class F>
OperandLayout table(int rows, int cols, int lanes, int slots, F&& f) {
  return OperandLayout::from_function(rows, cols, lanes, slots, [&](int lane, int slot) { return f(lane, slot); });
}

void add_nvidia_atoms(std::vector<AtomDesc>& mma, std::vector<LoadAtomDesc>& load);
void add_rdna3_atoms(std::vector<AtomDesc>& mma);
void add_rdna4_atoms(std::vector<AtomDesc>& mma);
void add_cdna_atoms(std::vector<AtomDesc>& mma);

}  // namespace flashprobe::probes::detail
