// ldmatrix on the GPU: which thread's row address feeds which (lane, register half), against the
// PTX ISA m8n8 .b16 figure, for .x1/.x2/.x4 with and without .trans.
#include <gtest/gtest.h>

#include "../common/gpu_skip.h"
#include "product_check.h"
#include "ptx_expected.h"

using namespace flashprobe::nvidia;
namespace t = flashprobe::nvidia::testing;

namespace {

class Ldmatrix : public ::testing::TestWithParam<int> {};
LdmatrixConfig config(int p) { return {1 << (p / 2), p % 2 == 1}; }

TEST_P(Ldmatrix, DerivedMapMatchesThePtxFigure) {
  FP_SKIP_WITHOUT_GPU();
  const auto cfg = config(GetParam());
  const auto m = t::named(derive_ldmatrix(cfg), "M");
  EXPECT_TRUE(m.anomalies.empty()) << m.anomalies.size() << " anomalies, first: "
                                   << (m.anomalies.empty() ? "" : m.anomalies.front());
  std::string diff;
  for (int l = 0; l < 32 && diff.empty(); ++l)
    for (int s = 0; s < m.slots && diff.empty(); ++s) {
      const auto want = ptx::ldmatrix(cfg.trans, l, s);
      if (m(l, s) != Coord{want.row, want.col})
        diff = "lane " + std::to_string(l) + " slot " + std::to_string(s) + ": got (" + std::to_string(m(l, s).row) +
               ", " + std::to_string(m(l, s).col) + "), PTX (" + std::to_string(want.row) + ", " +
               std::to_string(want.col) + ")";
    }
  EXPECT_EQ(diff, "") << name(cfg);
}

INSTANTIATE_TEST_SUITE_P(All, Ldmatrix, ::testing::Range(0, 6),
                         [](const auto& p) { return atom_name(config(p.param)); });

}  // namespace
