// The emitted constexpr code compiles (its static_asserts compare formula and table) and evaluates
// to the layouts it was emitted from.
#include <gtest/gtest.h>

#include "emitted_layouts.h"
#include "flashprobe/probes/atom.h"

using namespace flashprobe::probes;

TEST(Emitted, FunctionsReproduceTheLayouts) {
  const MmaLayout& sm80 = find_mma_atom("SM80_16x8x16_F32F16F16F32_TN")->expected.value();
  for (int lane = 0; lane < 32; ++lane)
    for (int slot = 0; slot < 8; ++slot) {
      const auto rc = emitted::sm80_16x8x16_a(lane, slot);
      EXPECT_EQ((Coord{rc[0], rc[1]}), sm80.a.at(lane, slot));
    }
  const MmaLayout& g = find_mma_atom("GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI")->expected.value();
  for (int lane = 0; lane < 32; ++lane)
    for (int slot = 0; slot < 16; ++slot) {
      const auto rc = emitted::gfx11_f16_hi_c(lane, slot);
      const Coord want = g.c.at(lane, slot);
      EXPECT_EQ(rc[0], want.row) << lane << " " << slot;
      EXPECT_EQ(rc[1], want.col) << lane << " " << slot;
    }
  EXPECT_EQ(emitted::scrambled(0, 0)[0], 1);  // the swapped slot holds lane 5's element (row 1)
}
