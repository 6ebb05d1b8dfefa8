// mma.sync on the GPU against the PTX ISA fragment figures: one-hot row and column classes and an
// exact random product, for each of the four forms.
#include <gtest/gtest.h>

#include "../common/gpu_skip.h"
#include "product_check.h"

using namespace flashprobe::nvidia;
namespace t = flashprobe::nvidia::testing;

namespace {

struct MmaCase {
  MmaSyncOp op;
  int m, n, k;
  t::Map a, b;
};

std::vector<MmaCase> cases() {
  return {{MmaSyncOp::m16n8k16_f16, 16, 8, 16, ptx::m16n8k16_a, ptx::m16n8k16_b},
          {MmaSyncOp::m16n8k16_bf16, 16, 8, 16, ptx::m16n8k16_a, ptx::m16n8k16_b},
          {MmaSyncOp::m16n8k8_f16, 16, 8, 8, ptx::m16n8k8_a, ptx::m16n8k8_b},
          {MmaSyncOp::m16n8k32_s8, 16, 8, 32, ptx::m16n8k32_a, ptx::m16n8k32_b}};
}

class MmaSync : public ::testing::TestWithParam<int> {};

// One experiment per A slot (one-hot, B all ones): D is 1 exactly on the slot's row. Then one per
// B slot (one-hot, A all ones): D is 1 exactly on the slot's column. All in one launch each.
TEST_P(MmaSync, OneHotRowAndColumnClassesMatchThePtxFigure) {
  FP_SKIP_WITHOUT_GPU();
  const auto mc = cases()[GetParam()];
  const auto s = mma_sync_slots(mc.op);
  for (int operand = 0; operand < 2; ++operand) {
    const int slots = operand == 0 ? s.a : s.b;
    const int ex = 32 * slots;
    std::vector<float> a(static_cast<std::size_t>(ex) * 32 * s.a, operand == 0 ? 0.0f : 1.0f);
    std::vector<float> b(static_cast<std::size_t>(ex) * 32 * s.b, operand == 1 ? 0.0f : 1.0f);
    std::vector<float> c(static_cast<std::size_t>(ex) * 32 * s.c, 0.0f), d(c.size());
    auto& hot = operand == 0 ? a : b;
    for (int e = 0; e < ex; ++e) hot[static_cast<std::size_t>(e) * 32 * slots + e] = 1.0f;
    run_mma_sync(mc.op, ex, a, b, c, d);
    for (int e = 0; e < ex; ++e) {
      const auto rc = operand == 0 ? mc.a(e / slots, e % slots) : mc.b(e / slots, e % slots);
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < s.c; ++i) {
          const auto dc = ptx::m16n8_c(l, i);
          const bool lit = operand == 0 ? dc.row == rc.row : dc.col == rc.col;
          ASSERT_EQ(d[(static_cast<std::size_t>(e) * 32 + l) * s.c + i], lit ? 1.0f : 0.0f)
              << name(mc.op) << (operand == 0 ? " A" : " B") << " lane " << e / slots << " slot " << e % slots
              << " -> D lane " << l << " slot " << i;
        }
    }
  }
}

TEST_P(MmaSync, RandomProductThroughThePtxLayoutsIsExact) {
  FP_SKIP_WITHOUT_GPU();
  const auto mc = cases()[GetParam()];
  const auto s = mma_sync_slots(mc.op);
  const t::ProductCase pc{mc.m, mc.n, mc.k, 32, s.a, s.b, s.c, mc.a, mc.b, ptx::m16n8_c};
  const int ex = 64;
  const auto o = t::make_operands(pc, ex, 1234u + GetParam());
  std::vector<float> d(o.c.size());
  run_mma_sync(mc.op, ex, o.a, o.b, o.c, d);
  const auto mismatch = t::first_product_mismatch(pc, o, d);
  EXPECT_EQ(mismatch, "") << name(mc.op);
}

INSTANTIATE_TEST_SUITE_P(All, MmaSync, ::testing::Range(0, 4), [](const auto& p) {
  return std::string(name(cases()[p.param].op));
});

}  // namespace
