// nvcuda::wmma on the GPU: the fragment layouts NVIDIA leaves unspecified, derived through the
// load/store path, checked for coverage, and reconciled with the semantic path (mma_sync on
// fragments filled through the derived maps must give the exact product).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../common/gpu_skip.h"
#include "product_check.h"

using namespace flashprobe;
using namespace flashprobe::nvidia;
namespace t = flashprobe::nvidia::testing;

namespace {

std::vector<WmmaConfig> configs() {
  std::vector<WmmaConfig> v;
  for (auto shape : {WmmaShape::m16n16k16, WmmaShape::m32n8k16, WmmaShape::m8n32k16})
    for (auto in : {DType::f16, DType::bf16})
      for (auto a : {Major::row, Major::col})
        for (auto b : {Major::row, Major::col}) v.push_back({shape, in, a, b});
  return v;
}

// Every (row, col) of the tile held by at least one slot; the first hole described.
std::string first_hole(const OperandMap& m) {
  std::set<std::pair<int, int>> held;
  for (const auto& c : m.at) held.insert({c.row, c.col});
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c)
      if (!held.count({r, c})) return m.what + ": element (" + std::to_string(r) + ", " + std::to_string(c) + ") in no slot";
  return {};
}

t::Map as_map(const OperandMap& m) {
  return [m](int lane, int slot) {
    const auto c = m(lane, slot);
    return ptx::RC{c.row, c.col};
  };
}

class Wmma : public ::testing::TestWithParam<int> {};

TEST_P(Wmma, LoadPathCoversTheTileAndReconcilesWithMmaSync) {
  FP_SKIP_WITHOUT_GPU();
  const auto cfg = configs()[GetParam()];
  const auto s = wmma_mnk(cfg.shape);
  const auto slots = wmma_slots(cfg);
  // Every fragment holds at least its share of the tile.
  EXPECT_GE(slots.a * 32, s.m * s.k);
  EXPECT_GE(slots.b * 32, s.k * s.n);
  EXPECT_GE(slots.c * 32, s.m * s.n);

  const auto a = t::named(derive_wmma_load(cfg, WmmaOperand::a), "A");
  const auto b = t::named(derive_wmma_load(cfg, WmmaOperand::b), "B");
  const auto c_row = t::named(derive_wmma_load(cfg, WmmaOperand::accumulator, Major::row), "C");
  const auto c_col = derive_wmma_load(cfg, WmmaOperand::accumulator, Major::col);
  const auto st_row = derive_wmma_store(cfg, Major::row);
  const auto st_col = derive_wmma_store(cfg, Major::col);
  for (const auto* m : {&a, &b, &c_row, &c_col, &st_row, &st_col}) {
    EXPECT_TRUE(m->anomalies.empty()) << m->what << ": " << m->anomalies.size() << " anomalies, first: "
                                      << (m->anomalies.empty() ? "" : m->anomalies.front());
  }
  for (const auto* m : {&a, &b, &c_row}) EXPECT_EQ(first_hole(*m), "");
  // The fragment layout of the accumulator does not depend on the memory order it is loaded from,
  // and storing puts each slot back where loading took it from.
  EXPECT_TRUE(c_row.at == c_col.at) << name(cfg) << ": accumulator fragment differs between row- and column-major loads";
  EXPECT_TRUE(c_row.at == st_row.at) << name(cfg) << ": store_matrix_sync (row-major) disagrees with load";
  EXPECT_TRUE(c_row.at == st_col.at) << name(cfg) << ": store_matrix_sync (column-major) disagrees with load";

  // Semantic path: fill the fragments through the load-derived maps (replicas get the same value,
  // as a load would give them) and compare mma_sync with the exact product.
  const t::ProductCase pc{s.m, s.n, s.k, 32, slots.a, slots.b, slots.c, as_map(a), as_map(b), as_map(c_row)};
  std::string mismatch = "load path has anomalies";
  if (a.anomalies.empty() && b.anomalies.empty() && c_row.anomalies.empty()) {
    const int ex = 64;
    const auto o = t::make_operands(pc, ex, 77u + GetParam());
    std::vector<float> d(o.c.size());
    run_wmma_mma(cfg, ex, o.a, o.b, o.c, d);
    mismatch = t::first_product_mismatch(pc, o, d);
  }
  EXPECT_EQ(mismatch, "") << name(cfg);
}

INSTANTIATE_TEST_SUITE_P(All, Wmma, ::testing::Range(0, static_cast<int>(configs().size())),
                         [](const auto& p) { return name(configs()[p.param]); });

// Fragments of the same shape and input type share the accumulator layout whatever the A/B majors.
TEST(WmmaLayouts, AccumulatorLayoutDependsOnlyOnTheShape) {
  FP_SKIP_WITHOUT_GPU();
  for (auto shape : {WmmaShape::m16n16k16, WmmaShape::m32n8k16, WmmaShape::m8n32k16}) {
    const auto ref = derive_wmma_load({shape, DType::f16, Major::row, Major::row}, WmmaOperand::accumulator);
    for (const auto& cfg : configs()) {
      if (cfg.shape == shape) {
        EXPECT_TRUE(derive_wmma_load(cfg, WmmaOperand::accumulator).at == ref.at) << name(cfg);
      }
    }
  }
}

}  // namespace
