// Writes the constexpr emission of a few atoms (linear, replicated, ignored slots, non-linear) to
// the header named on the command line; test_emitted.cpp compiles it.
#include <fstream>
#include <iostream>

#include "flashprobe/probes/atom.h"

using namespace flashprobe::probes;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: probe_emit_layouts OUT.h\n";
    return 2;
  }
  std::ofstream out(argv[1]);
  out << "#pragma once\n#include <array>\nnamespace emitted {\n";
  out << emit_constexpr(find_mma_atom("SM80_16x8x16_F32F16F16F32_TN")->expected.value(), "sm80_16x8x16");
  out << emit_constexpr(find_mma_atom("GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI")->expected.value(), "gfx11_f16_hi");
  // A non-linear table: ldmatrix x4 is linear, so scramble one: swap two slots' elements.
  OperandLayout l = find_load_atom("SM75_LDMATRIX_X1_B16")->expected.value();
  const Coord a = l.at(0, 0), b = l.at(5, 1);
  l.set(0, 0, b);
  l.set(5, 1, a);
  out << emit_constexpr(l, "scrambled");
  out << "}  // namespace emitted\n";
  return out ? 0 : 1;
}
