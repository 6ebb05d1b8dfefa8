// The mma kernel's block order (kernels/src/mma/mma_order.h), checked for what the kernel relies on:
// each order's grid visits every row block of every (batch, head) exactly once (no row left
// unwritten, none written twice); in dispatch order (x fastest) a head's row blocks come heaviest
// first; heads_inner puts a batch's heads innermost, so that all of a batch's heavy row blocks come
// before its light ones; and the launcher's choice: heads_inner exactly under a causal mask, unless
// the row blocks exceed the grid's y limit; a forced order (the variants mma/order=rows|heads,
// parsed in variants.cpp and tested in test_variants.cpp) only where it fits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/mma/mma_order.h"

namespace flashprobe::kernels::dev {
namespace {

const char* name(MmaOrder o) { return o == MmaOrder::heads_inner ? "heads_inner" : "rows_inner"; }

// Walks the grid in dispatch order and returns the row blocks it names.
std::vector<MmaRowBlock> dispatch(MmaOrder o, int nm, int hq, int batch) {
  const MmaGrid g = mma_grid(o, nm, hq, batch);
  std::vector<MmaRowBlock> v;
  for (unsigned z = 0; z < g.z; ++z)
    for (unsigned y = 0; y < g.y; ++y)
      for (unsigned x = 0; x < g.x; ++x) v.push_back(mma_row_block(o, x, y, z, g.x, g.y));
  return v;
}

TEST(MmaOrder, EveryRowBlockExactlyOnceHeaviestFirst) {
  for (MmaOrder o : {MmaOrder::rows_inner, MmaOrder::heads_inner})
    for (int nm : {1, 2, 3, 16, 17})
      for (int hq : {1, 3, 16})
        for (int batch : {1, 2, 5}) {
          SCOPED_TRACE(std::string(name(o)) + " nm=" + std::to_string(nm) + " hq=" + std::to_string(hq) +
                       " batch=" + std::to_string(batch));
          const auto v = dispatch(o, nm, hq, batch);
          ASSERT_EQ(v.size(), static_cast<std::size_t>(nm) * hq * batch);
          std::vector<int> seen(v.size(), 0), last_m(static_cast<std::size_t>(hq) * batch, nm);
          for (const auto& r : v) {
            ASSERT_TRUE(r.m >= 0 && r.m < nm && r.h >= 0 && r.h < hq && r.b >= 0 && r.b < batch)
                << "m=" << r.m << " h=" << r.h << " b=" << r.b;
            ++seen[(static_cast<std::size_t>(r.b) * hq + r.h) * nm + r.m];
            int& prev = last_m[static_cast<std::size_t>(r.b) * hq + r.h];
            EXPECT_LT(r.m, prev) << "head (" << r.b << ", " << r.h << ") takes row block " << r.m << " after " << prev;
            prev = r.m;
          }
          for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "row block " << i;
        }
}

TEST(MmaOrder, HeadsInnerTakesABatchsHeavyRowBlocksFirst) {
  const int nm = 5, hq = 4, batch = 3;
  const auto v = dispatch(MmaOrder::heads_inner, nm, hq, batch);
  for (std::size_t i = 0; i < v.size(); ++i) {
    // Block i: batch i / (nm * hq), then row blocks nm - 1 .. 0, the batch's heads innermost.
    EXPECT_EQ(v[i].b, static_cast<int>(i) / (nm * hq));
    EXPECT_EQ(v[i].m, nm - 1 - static_cast<int>(i) % (nm * hq) / hq);
    EXPECT_EQ(v[i].h, static_cast<int>(i) % hq);
  }
  const auto r = dispatch(MmaOrder::rows_inner, nm, hq, batch);
  EXPECT_EQ(r[1].h, 0) << "rows_inner keeps one head's row blocks together";
  EXPECT_EQ(r[1].m, nm - 2);
}

TEST(MmaOrder, LauncherChoice) {
  EXPECT_EQ(mma_order(true, 16), MmaOrder::heads_inner);
  EXPECT_EQ(mma_order(false, 16), MmaOrder::rows_inner);
  EXPECT_EQ(mma_order(true, kMmaMaxGridY), MmaOrder::heads_inner);
  EXPECT_EQ(mma_order(true, kMmaMaxGridY + 1), MmaOrder::rows_inner) << "nm is grid.y in heads_inner";
  EXPECT_EQ(mma_order(true, 16, MmaOrderChoice::automatic), MmaOrder::heads_inner);
  EXPECT_EQ(mma_order(false, 16, MmaOrderChoice::automatic), MmaOrder::rows_inner);
  EXPECT_EQ(mma_order(true, 16, MmaOrderChoice::rows), MmaOrder::rows_inner);
  EXPECT_EQ(mma_order(false, 16, MmaOrderChoice::heads), MmaOrder::heads_inner);
  EXPECT_EQ(mma_order(false, kMmaMaxGridY + 1, MmaOrderChoice::heads), MmaOrder::rows_inner) << "forced only where it fits";
  static_assert(mma_order(true, 3) == MmaOrder::heads_inner, "host and device code: constexpr");
}

}  // namespace
}  // namespace flashprobe::kernels::dev
