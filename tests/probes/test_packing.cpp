// Packed singles (probes/src/packing.h): widths keep every value exact, packs cover each slot once,
// and the decoder trusts only D values that are sums of distinct members lighting nothing or a full
// row -- anything else (a value that makes a member partial, a fraction, NaN, a negative or too large
// value) sends the pack back to singles.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "packing.h"

using namespace flashprobe::probes;
using namespace flashprobe::probes::packing;

namespace {
// Four used D slots in two "rows" {0, 1} and {2, 3} (full = 2), slot 4 unused; three members.
const std::vector<char> kUsed{1, 1, 1, 1, 0};
constexpr int kFull = 2, kWidth = 3;
// Member 0 lights row {0, 1}, member 2 lights row {2, 3}, member 1 lights nothing.
std::vector<double> clean_pack() { return {1, 1, 4, 4, 0}; }
}  // namespace

TEST(Packing, WidthKeepsMembersAndSumsExact) {
  EXPECT_EQ(pack_width(ElemType::f16, ElemType::f32), 16);  // the cap
  EXPECT_EQ(pack_width(ElemType::bf16, ElemType::f32), 16);
  EXPECT_EQ(pack_width(ElemType::f16, ElemType::f16), 11);   // 2047 exact in f16, 4095 not
  EXPECT_EQ(pack_width(ElemType::e4m3, ElemType::f32), 9);   // 256 is e4m3, 512 is not
  EXPECT_EQ(pack_width(ElemType::s8, ElemType::s32), 7);     // 64 fits in s8, 128 does not
  EXPECT_EQ(pack_width(ElemType::f16, ElemType::f32, 4), 4);
  for (ElemType op : {ElemType::f16, ElemType::bf16, ElemType::e4m3, ElemType::s8})
    for (ElemType acc : {ElemType::f16, ElemType::f32, ElemType::s32}) {
      const int w = pack_width(op, acc);
      for (int j = 0; j < w; ++j) EXPECT_TRUE(exact_in(op, std::ldexp(1.0, j)));
      EXPECT_TRUE(exact_in(acc, std::ldexp(1.0, w) - 1));
    }
}

TEST(Packing, PacksCoverEverySlotOnceAndKeepPowerOfTwoDistancesApart) {
  for (int n : {1, 2, 7, 16, 17, 64, 512, 1024, 4096})
    for (int width : {1, 3, 11, 16}) {
      const auto packs = make_packs(n, width);
      std::vector<int> seen(static_cast<std::size_t>(n), 0);
      for (const auto& p : packs) {
        EXPECT_GE(p.size(), 1u);
        EXPECT_LE(static_cast<int>(p.size()), width);
        for (int i : p) ++seen[static_cast<std::size_t>(i)];
        if (packs.size() > 1)
          for (std::size_t x = 0; x < p.size(); ++x)
            for (std::size_t y = x + 1; y < p.size(); ++y) {
              const int dist = p[y] - p[x];
              EXPECT_NE(dist & (dist - 1), 0) << "slots " << p[x] << " and " << p[y] << " share a pack";
            }
      }
      for (int c : seen) EXPECT_EQ(c, 1) << n << " slots, width " << width;
    }
  EXPECT_EQ(make_packs(1024, 16).size(), 65u);  // 64 would be even
  EXPECT_EQ(make_packs(4096, 16).size(), 257u);
}

TEST(Packing, ACleanPackDecodesIntoItsMembersSingles) {
  const auto d = clean_pack();
  const Decoded p = decode(d.data(), kUsed, kWidth);
  EXPECT_EQ(p.bad, 0);
  ASSERT_EQ(p.members.size(), 3u);
  EXPECT_EQ(p.members[0].lit, (std::vector<int>{0, 1}));
  EXPECT_TRUE(p.members[1].lit.empty());
  EXPECT_EQ(p.members[2].lit, (std::vector<int>{2, 3}));
  EXPECT_TRUE(trusted(p, kFull));
  // Garbage in an unused D slot is not read (singles ignore it too).
  auto g = d;
  g[4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(trusted(decode(g.data(), kUsed, kWidth), kFull));
  // Two members on one row (different k of the same row) are fine: 1 + 2 = 3 on both slots.
  const std::vector<double> shared{3, 3, 4, 4, 0};
  EXPECT_TRUE(trusted(decode(shared.data(), kUsed, kWidth), kFull));
}

TEST(Packing, ACombinationThatLeavesAMemberPartialIsDistrusted) {
  // 3 = members 0 and 1 on slot 0, but member 1 then lights one D slot of a two-slot row (a lone
  // copy of a replicated element feeding half of the result looks like this).
  const std::vector<double> d{3, 1, 4, 4, 0};
  const Decoded p = decode(d.data(), kUsed, kWidth);
  EXPECT_EQ(p.bad, 0);
  EXPECT_EQ(p.members[1].lit, (std::vector<int>{0}));
  EXPECT_FALSE(trusted(p, kFull));
  // 5 = members 0 and 2 on slot 1: member 2 lights three slots, more than a row.
  const std::vector<double> wide{1, 5, 4, 4, 0};
  EXPECT_EQ(decode(wide.data(), kUsed, kWidth).members[2].lit, (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(trusted(decode(wide.data(), kUsed, kWidth), kFull));
}

TEST(Packing, ValuesThatAreNoSumOfDistinctMembersAreBad) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double v : {0.5, 4.25, -1.0, -4.0, 8.0, 12.0, nan, inf, -inf}) {
    auto d = clean_pack();
    d[2] = v;  // 8 and 12 need a fourth member; a width-3 pack has none
    const Decoded p = decode(d.data(), kUsed, kWidth);
    EXPECT_EQ(p.bad, 1) << v;
    EXPECT_EQ(p.bad_slot, 2) << v;
    EXPECT_FALSE(trusted(p, kFull)) << v;
  }
  // A whole pack of NaN (the poison replica rule) is distrusted however the members would look.
  const std::vector<double> poison(5, nan);
  EXPECT_EQ(decode(poison.data(), kUsed, kWidth).bad, 4);
}

TEST(Packing, EffectOfASingle) {
  const std::vector<double> d{1, 0, 2, 1, 7};
  const Effect e = effect(d.data(), kUsed, 1);
  EXPECT_EQ(e.lit, (std::vector<int>{0, 3}));
  EXPECT_EQ(e.bad, 1);
  EXPECT_EQ(e.bad_slot, 2);
  EXPECT_EQ(e.bad_value, 2);
}
