// wgmma on the GPU (sm_90 only): the accumulator layout of m64nNk16 derived from shared-memory
// operands with documented layouts, the A-register layout derived through it, both against the
// PTX ISA figures, and an exact random product through them. On any other device: the host check
// refuses with a message (UsageError, exit 2 in the CLI).
#include <gtest/gtest.h>

#include "../common/gpu_skip.h"
#include "flashprobe/core/error.h"
#include "product_check.h"

using namespace flashprobe;
using namespace flashprobe::nvidia;
namespace t = flashprobe::nvidia::testing;

namespace {

std::string first_diff(const OperandMap& m, ptx::RC (*want)(int, int)) {
  for (int l = 0; l < m.lanes; ++l)
    for (int s = 0; s < m.slots; ++s) {
      const auto w = want(l, s);
      if (m(l, s) != Coord{w.row, w.col})
        return m.what + ": thread " + std::to_string(l) + " slot " + std::to_string(s) + ": got (" +
               std::to_string(m(l, s).row) + ", " + std::to_string(m(l, s).col) + "), PTX (" + std::to_string(w.row) +
               ", " + std::to_string(w.col) + ")";
    }
  return {};
}

class Wgmma : public ::testing::TestWithParam<int> {};
WgmmaConfig config(int p) { return {kWgmmaN[p / 2], p % 2 == 1}; }

TEST_P(Wgmma, DerivedLayoutsMatchThePtxFiguresAndTheProductIsExact) {
  FP_SKIP_WITHOUT_GPU();
  const auto dev = require_device();
  std::string why;
  if (!wgmma_supported(dev, &why)) GTEST_SKIP() << why;
  const auto cfg = config(GetParam());
  auto maps = derive_wgmma(cfg);
  maps.d = t::named(maps.d, "C");
  for (const auto* m : {&maps.d, &maps.a})
    EXPECT_TRUE(m->anomalies.empty()) << m->what << ": " << m->anomalies.size() << " anomalies, first: "
                                      << (m->anomalies.empty() ? "" : m->anomalies.front());
  std::string diff = first_diff(maps.d, ptx::wgmma_d);
  if (!cfg.a_from_smem) {
    maps.a = t::named(maps.a, "A");
    if (diff.empty()) diff = first_diff(maps.a, ptx::wgmma_a);
    // Exact random product with A from registers through the PTX A map, B through shared memory:
    // B is given logically, so the product case has no B slots; build it by hand.
    const int n = cfg.n, acc = n / 2, ex = 4;
    std::mt19937 rng(99u + GetParam());
    std::uniform_int_distribution<int> val(-3, 3);
    std::vector<float> a(ex * 128 * 8), b(ex * 16 * n), c(ex * 128 * acc), d(c.size());
    std::vector<std::vector<double>> want(ex);
    for (int e = 0; e < ex; ++e) {
      std::vector<double> A(64 * 16), B(16 * n), C(64 * n);
      for (auto& x : A) x = val(rng);
      for (auto& x : B) x = val(rng);
      for (auto& x : C) x = val(rng);
      for (int i = 0; i < 16 * n; ++i) b[e * 16 * n + i] = static_cast<float>(B[i]);
      for (int th = 0; th < 128; ++th) {
        for (int s = 0; s < 8; ++s) {
          const auto rc = ptx::wgmma_a(th, s);
          a[(e * 128 + th) * 8 + s] = static_cast<float>(A[rc.row * 16 + rc.col]);
        }
        for (int s = 0; s < acc; ++s) {
          const auto rc = ptx::wgmma_d(th, s);
          c[(e * 128 + th) * acc + s] = static_cast<float>(C[rc.row * n + rc.col]);
        }
      }
      want[e] = C;
      for (int i = 0; i < 64; ++i)
        for (int j = 0; j < n; ++j)
          for (int k = 0; k < 16; ++k) want[e][i * n + j] += A[i * 16 + k] * B[k * n + j];
    }
    run_wgmma(cfg, ex, a, b, c, d);
    for (int e = 0; e < ex && diff.empty(); ++e)
      for (int th = 0; th < 128 && diff.empty(); ++th)
        for (int s = 0; s < acc && diff.empty(); ++s) {
          const auto rc = ptx::wgmma_d(th, s);
          if (d[(e * 128 + th) * acc + s] != want[e][rc.row * n + rc.col])
            diff = "random product: thread " + std::to_string(th) + " slot " + std::to_string(s) + " differs";
        }
  }
  EXPECT_EQ(diff, "") << name(cfg);
}

INSTANTIATE_TEST_SUITE_P(All, Wgmma, ::testing::Range(0, 10),
                         [](const auto& p) { return name(config(p.param)); });

}  // namespace
