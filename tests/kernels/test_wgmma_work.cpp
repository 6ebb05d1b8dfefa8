// The persistent wgmma grid's work list (wgmma_config.h), checked for what the kernel relies on:
// every 128-row block of every (batch, head) is visited exactly once (no row left unwritten, none
// written twice), the heavier row block of an item comes first, items of one (batch, head) are
// consecutive (blocks running together share K and V in the L2), and under a causal mask (paired)
// with Sq = Sk every item but an odd middle one sees the same number of key tiles, so that a fixed
// stride over items balances the blocks; without a mask every item is one row block.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::dev {
namespace {

std::string check_list(int nm, int hq, int batch, bool paired) {
  const WgmmaWorkList wl{nm, hq, batch, paired};
  const std::string id = "nm=" + std::to_string(nm) + " hq=" + std::to_string(hq) + " batch=" + std::to_string(batch) +
                         (paired ? " paired" : " single");
  std::vector<int> seen(static_cast<std::size_t>(nm) * hq * batch, 0);
  int prev_group = -1;
  for (int w = 0; w < wl.items(); ++w) {
    const int n = wl.count(w);
    if (n < 1 || n > (paired ? 2 : 1)) return id + ": item " + std::to_string(w) + " has " + std::to_string(n) + " row blocks";
    const auto a = wl.row_block(w, 0);
    if (n == 2) {
      const auto c = wl.row_block(w, 1);
      if (c.h != a.h || c.b != a.b) return id + ": item " + std::to_string(w) + " spans two heads or batches";
      if (c.m >= a.m) return id + ": item " + std::to_string(w) + " does not put the heavier row block first";
      // Causal, Sq = Sk, kBm = kBn: row block m sees m + 1 tiles; a pair sees nm + 1.
      if (a.m + 1 + c.m + 1 != nm + 1) return id + ": item " + std::to_string(w) + " is not a balanced pair";
    }
    const int group = a.b * hq + a.h;
    if (group < prev_group) return id + ": (batch, head) groups out of order at item " + std::to_string(w);
    prev_group = group;
    for (int k = 0; k < n; ++k) {
      const auto r = wl.row_block(w, k);
      if (r.m < 0 || r.m >= nm || r.h < 0 || r.h >= hq || r.b < 0 || r.b >= batch)
        return id + ": item " + std::to_string(w) + " names a row block outside the problem";
      ++seen[(static_cast<std::size_t>(r.b) * hq + r.h) * nm + r.m];
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1) return id + ": row block " + std::to_string(i) + " visited " + std::to_string(seen[i]) + " times";
  return "";
}

TEST(WgmmaWork, EveryRowBlockOnceHeavierFirstBalancedPairs) {
  for (bool paired : {true, false})
    for (int nm : {1, 2, 3, 4, 5, 16, 17, 128})
      for (auto [hq, batch] : {std::pair{1, 1}, std::pair{3, 2}, std::pair{16, 8}})
        EXPECT_EQ(check_list(nm, hq, batch, paired), "");
}

TEST(WgmmaWork, ItemCounts) {
  EXPECT_EQ((WgmmaWorkList{1, 1, 1, true}.items()), 1);
  EXPECT_EQ((WgmmaWorkList{4, 32, 32, true}.items()), 2 * 32 * 32);   // S = 512 causal: two pairs per head
  EXPECT_EQ((WgmmaWorkList{4, 32, 32, false}.items()), 4 * 32 * 32);  // without a mask: four row blocks
  EXPECT_EQ((WgmmaWorkList{5, 2, 3, true}.items()), 3 * 2 * 3);       // odd: the middle row block alone
  EXPECT_EQ((WgmmaWorkList{5, 2, 3, true}.count(2)), 1);
  EXPECT_EQ((WgmmaWorkList{5, 2, 3, true}.row_block(2, 0).m), 2);
  // The measured rule: pairs under a causal mask and at D = 64, singles at D = 128 without a mask.
  EXPECT_EQ((work_list_of<64>(1500, 16, 4, false).items()), 6 * 16 * 4);
  EXPECT_EQ((work_list_of<128>(1500, 16, 4, false).items()), 12 * 16 * 4);
  EXPECT_EQ((work_list_of<128>(1500, 16, 4, true).items()), 6 * 16 * 4);
  // The registry's 32-bit bound is about items, not row blocks: 2^16 heads x 2^15 batches of one
  // pair each is past it.
  EXPECT_GT((WgmmaWorkList{2, 65535, 65535, true}.items()), std::int64_t{INT32_MAX});
}

// next_in_walk (the lookahead of wgmma/carry=on's consumers) visits exactly the row blocks of the
// nested walk (items blockIdx, blockIdx + stride, ...; each item's row blocks in order), in that
// order, and stops where it stops; also next to INT32_MAX items, where w + stride must not be formed.
TEST(WgmmaWork, NextInWalkFollowsTheBlocksWalk) {
  for (bool paired : {true, false})
    for (int nm : {1, 2, 3, 5, 16})
      for (auto [hq, batch] : {std::pair{1, 1}, std::pair{3, 2}})
        for (int stride : {1, 2, 3, 7, 132}) {
          const WgmmaWorkList wl{nm, hq, batch, paired};
          const int items = static_cast<int>(wl.items());
          for (int first = 0; first < stride && first < items; ++first) {
            std::vector<std::pair<int, int>> nested, stepped;
            for (int w = first; w < items; w += stride)
              for (int k = 0; k < wl.count(w); ++k) nested.emplace_back(w, k);
            int w = first, k = 0;
            stepped.emplace_back(w, k);
            for (int w2 = 0, k2 = 0; wl.next_in_walk(w, k, stride, w2, k2); w = w2, k = k2) {
              stepped.emplace_back(w2, k2);
              ASSERT_LE(stepped.size(), nested.size()) << "the walk runs past its end";
            }
            EXPECT_EQ(stepped, nested) << "nm=" << nm << " hq=" << hq << " batch=" << batch << " stride=" << stride
                                       << " first=" << first << (paired ? " paired" : " single");
          }
        }
  // INT32_MAX single-row-block items: the last item of a walk has no successor, and asking does not
  // form w + stride past INT32_MAX.
  const WgmmaWorkList big{1, 65535, 32768, false};
  ASSERT_LE(big.items(), std::int64_t{INT32_MAX});
  const int last = static_cast<int>(big.items()) - 1;
  int w2 = -1, k2 = -1;
  EXPECT_FALSE(big.next_in_walk(last, 0, 132, w2, k2));
  EXPECT_FALSE(big.next_in_walk(last - 131, 0, 132, w2, k2));
  EXPECT_TRUE(big.next_in_walk(last - 132, 0, 132, w2, k2));
  EXPECT_EQ(w2, last);
  EXPECT_EQ(k2, 0);
}

}  // namespace
}  // namespace flashprobe::kernels::dev
