// Formula inference: the printed shifts and masks, evaluated, reproduce the table.
#include <gtest/gtest.h>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/formula.h"

using namespace flashprobe::probes;

namespace {
// Every used slot's (row, col) equals the printed formula evaluated at (lane, slot).
void expect_formula_reproduces(const OperandLayout& l, const std::string& what) {
  const Formula f = formula(l);
  ASSERT_TRUE(f.linear) << what << ": " << f.reason;
  for (int lane = 0; lane < l.lanes(); ++lane)
    for (int slot = 0; slot < l.slots(); ++slot) {
      const Coord c = l.at(lane, slot);
      if (c.ignored()) continue;
      ASSERT_EQ(eval_expr(f.row, lane, slot), c.row) << what << " row at lane " << lane << " slot " << slot << ": " << f.row;
      ASSERT_EQ(eval_expr(f.col, lane, slot), c.col) << what << " col at lane " << lane << " slot " << slot << ": " << f.col;
    }
}
}  // namespace

TEST(Formula, Rdna3AccumulatorPrintsAsTheIsaWritesIt) {
  const auto& l = find_mma_atom("GFX11_WMMA_16x16x16_F32F16_W32")->expected.value();
  EXPECT_EQ(formula(l.c).text(), "row = 2*slot + (lane >> 4); col = lane & 15");
  EXPECT_EQ(formula(l.a).text(), "row = lane & 15; col = slot");  // lane bit 4 replicates: image 0
  const auto& m = find_mma_atom("SM80_16x8x16_F32F16F16F32_TN")->expected.value();
  EXPECT_EQ(formula(m.c).text(), "row = 8*(slot >> 1) + (lane >> 2); col = (slot & 1) + 2*(lane & 3)");
}

TEST(Formula, EveryDocumentedLayoutIsLinearAndItsFormulaReproducesIt) {
  for (const AtomDesc& a : mma_atoms()) {
    if (!a.expected) continue;
    for (Operand op : {Operand::A, Operand::B, Operand::C})
      expect_formula_reproduces(a.expected->operand(op), a.name + " " + std::string(operand_name(op)));
  }
  for (const LoadAtomDesc& a : load_atoms()) expect_formula_reproduces(a.expected.value(), a.name);
}

TEST(Formula, XorSwizzlesPrintAsLayers) {
  // col = lane ^ (lane >> 2) style swizzle over 16 lanes, 1 slot, 4x4: bit-wise XOR of two fields.
  auto l = OperandLayout::from_function(4, 4, 16, 1, [](int lane, int) {
    const int e = lane ^ (lane >> 2);
    return Coord{e >> 2, e & 3};
  });
  const Formula f = formula(l);
  ASSERT_TRUE(f.linear);
  EXPECT_NE(f.col.find('^'), std::string::npos) << f.col;
  expect_formula_reproduces(l, "swizzle");
}

TEST(Formula, APermutationIsNotLinear) {
  auto l = OperandLayout::from_function(4, 4, 16, 1, [](int lane, int) { return Coord{lane / 4, lane % 4}; });
  l.set(1, 0, Coord{0, 2});
  l.set(2, 0, Coord{0, 1});
  const Formula f = formula(l);
  EXPECT_FALSE(f.linear);
  EXPECT_EQ(f.text().rfind("not linear over GF(2)", 0), 0u) << f.text();
  // An affine map (a constant offset) is not linear either.
  auto g = OperandLayout::from_function(4, 4, 16, 1, [](int lane, int) { return Coord{(lane / 4) ^ 1, lane % 4}; });
  EXPECT_FALSE(formula(g).linear);
}

TEST(Formula, EvaluatorFollowsCPrecedence) {
  EXPECT_EQ(eval_expr("2*slot + (lane >> 4)", 17, 3), 7);
  EXPECT_EQ(eval_expr("lane & 15", 17, 0), 1);
  EXPECT_EQ(eval_expr("1 + 2 << 1", 0, 0), 6);        // + before <<
  EXPECT_EQ(eval_expr("6 & 3 ^ 1", 0, 0), 3);         // & before ^
  EXPECT_EQ(eval_expr("(slot & 1) + 8*(slot >> 2) + 2*(lane & 3)", 7, 5), 1 + 8 + 6);
  EXPECT_THROW(eval_expr("lane +", 0, 0), std::invalid_argument);
  EXPECT_THROW(eval_expr("(lane", 0, 0), std::invalid_argument);
  EXPECT_THROW(eval_expr("warp", 0, 0), std::invalid_argument);
}
