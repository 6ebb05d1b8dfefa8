#include <gtest/gtest.h>

#include "flashprobe/core/guard.h"

using namespace flashprobe;

TEST(Guard, IntactBandHasNoDamage) {
  std::vector<std::uint8_t> band(kGuardBytes);
  fill_guard(band);
  EXPECT_FALSE(find_guard_damage(band, true));
  EXPECT_FALSE(find_guard_damage(band, false));
}

TEST(Guard, OverflowOneBytePastTheEndIsFoundAtOffsetZero) {
  std::vector<std::uint8_t> band(kGuardBytes);
  fill_guard(band);
  band[0] ^= 1;
  band[10] = 0;
  auto d = find_guard_damage(band, false);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->offset, 0u);
  EXPECT_EQ(d->bytes, 2u);
  EXPECT_NE(d->describe().find("past its end"), std::string::npos);
}

TEST(Guard, UnderflowIsMeasuredFromTheDataStart) {
  std::vector<std::uint8_t> band(kGuardBytes);
  fill_guard(band);
  band[kGuardBytes - 3] = 0xFF;  // the poison byte, written 3 bytes before the data
  auto d = find_guard_damage(band, true);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->offset, 2u);
  EXPECT_TRUE(d->before);
}
