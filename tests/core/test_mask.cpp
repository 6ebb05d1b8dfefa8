// flashprobe/core/mask.h against a per-key reading of docs/attention-semantics.md: for every small
// shape, alignment, mask and window, the interval narrow() leaves is exactly the set of keys the
// definition lets the row see; kv_head gives every kv head exactly group query heads, in order.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "flashprobe/core/mask.h"

namespace mask = flashprobe::mask;

namespace {
// The definition, one key at a time.
bool sees(std::int64_t i, std::int64_t j, std::int64_t keys, std::int64_t diag_off, bool causal, int wl, int wr) {
  const std::int64_t d = i + diag_off;
  return j >= 0 && j < keys && (!causal || j <= d) && (wl < 0 || j >= d - wl) && (wr < 0 || j <= d + wr);
}
}  // namespace

static_assert(mask::diag_offset(false, 8, 1) == 7, "bottom-right: the decode row sits on the last key");
static_assert(mask::diag_offset(true, 8, 1) == 0);
static_assert(mask::kv_head(5, 4) == 1);
static_assert(mask::q_head(1, 1, 4) == 5 && mask::group_member(5, 4) == 1);

TEST(Mask, IntervalEqualsTheDefinitionKeyByKey) {
  int rows = 0;
  for (bool top_left : {false, true})
    for (int keys = 0; keys <= 7; ++keys)
      for (int sq = 1; sq <= 7; ++sq)
        for (bool causal : {false, true})
          for (int wl : {-1, 0, 1, 3})
            for (int wr : {-1, 0, 2})
              for (int i = 0; i < sq; ++i) {
                const std::int64_t off = mask::diag_offset(top_left, keys, sq);
                std::int64_t lo = 0, hi = keys - 1;
                mask::narrow<std::int64_t>(i + off, causal, wl, wr, lo, hi);
                for (std::int64_t j = -2; j < keys + 2; ++j)
                  ASSERT_EQ(j >= lo && j <= hi && j >= 0 && j < keys, sees(i, j, keys, off, causal, wl, wr))
                      << "top_left " << top_left << " keys " << keys << " sq " << sq << " causal " << causal
                      << " window (" << wl << ", " << wr << ") row " << i << " key " << j;
                ++rows;
              }
  EXPECT_GT(rows, 10000);
}

TEST(Mask, ThirtyTwoBitIntervalsAgreeWithSixtyFourBit) {
  for (int diag = -5; diag <= 5; ++diag)
    for (int wl : {-1, 0, 2})
      for (int wr : {-1, 1}) {
        std::int64_t lo = 0, hi = 9;
        int lo32 = 0, hi32 = 9;
        mask::narrow<std::int64_t>(diag, true, wl, wr, lo, hi);
        mask::narrow<int>(diag, true, wl, wr, lo32, hi32);
        EXPECT_EQ(lo, lo32);
        EXPECT_EQ(hi, hi32);
      }
}

TEST(Mask, EveryKvHeadServesOneContiguousGroup) {
  for (int hkv = 1; hkv <= 4; ++hkv)
    for (int group = 1; group <= 5; ++group) {
      const int hq = hkv * group;
      int count[4] = {};
      for (int h = 0; h < hq; ++h) {
        const int k = mask::kv_head(h, group);
        ASSERT_GE(k, 0);
        ASSERT_LT(k, hkv);
        EXPECT_EQ(k, h * hkv / hq) << "query heads of a group are adjacent (not h % hkv)";
        ++count[k];
      }
      for (int k = 0; k < hkv; ++k) EXPECT_EQ(count[k], group);
    }
}

// The inverse map (decode and the backward walk a kv head's query heads): q_head enumerates exactly
// the query heads kv_head sends to that kv head, each once, and group_member is the position in it.
TEST(Mask, QueryHeadsOfAKvHeadInvertKvHead) {
  for (int hkv = 1; hkv <= 4; ++hkv)
    for (int group = 1; group <= 5; ++group) {
      const int hq = hkv * group;
      std::vector<int> seen(static_cast<std::size_t>(hq), 0);
      for (int k = 0; k < hkv; ++k)
        for (int m = 0; m < group; ++m) {
          const int h = mask::q_head(k, m, group);
          ASSERT_GE(h, 0);
          ASSERT_LT(h, hq);
          EXPECT_EQ(mask::kv_head(h, group), k);
          EXPECT_EQ(mask::group_member(h, group), m);
          ++seen[static_cast<std::size_t>(h)];
        }
      for (int h = 0; h < hq; ++h) EXPECT_EQ(seen[static_cast<std::size_t>(h)], 1) << "head " << h;
    }
}
