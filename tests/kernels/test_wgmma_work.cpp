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

}  // namespace
}  // namespace flashprobe::kernels::dev
