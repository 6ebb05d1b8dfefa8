// The exact encodings the AMD experiment kernels use on the device (elements.h), checked on the host:
// a wrong bf16 rounding or fp8 bias would make a probe report a layout the hardware does not have.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "flashprobe/core/half.h"
#include "flashprobe/probes/amd/elements.h"
#include "flashprobe/probes/amd/run.h"
#include "flashprobe/probes/elem_type.h"

namespace amd = flashprobe::probes::amd;

TEST(AmdElements, Bf16MatchesCoreRoundingOnEveryPatternAndRandomFloats) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float v = fp_amd::bf16_value(static_cast<std::uint16_t>(h));
    if (std::isnan(v)) continue;
    ASSERT_EQ(fp_amd::bf16_bits(v), h) << "bf16 pattern " << h << " does not survive a round trip";
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float x = __builtin_bit_cast(float, bits(rng));
    if (std::isnan(x)) continue;
    ASSERT_EQ(fp_amd::bf16_bits(x), flashprobe::to_bf16_bits(x)) << "x = " << x;
  }
}

TEST(AmdElements, Bf16RoundsTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 (even mantissa) and 1 + 2^-7: rounds down; 1 + 3*2^-8 rounds up.
  EXPECT_EQ(fp_amd::bf16_bits(1.0f + 1.0f / 256), 0x3F80);
  EXPECT_EQ(fp_amd::bf16_bits(1.0f + 3.0f / 256), 0x3F82);
  EXPECT_EQ(fp_amd::bf16_bits(1.5f), 0x3FC0);
}

TEST(AmdElements, E4m3fnuzKnownValues) {
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(1.0f), 0x40);  // bias 8, not OCP e4m3fn's 0x38
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(-1.0f), 0xC0);
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(240.0f), 0x7F);
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(0.0f), 0x00);
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(-0.0f), 0x00);  // FNUZ has no negative zero
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(std::ldexp(1.0f, -10)), 0x01);  // smallest subnormal
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(std::ldexp(1.0f, -7)), 0x08);   // smallest normal
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(std::numeric_limits<float>::quiet_NaN()), 0x80);
  EXPECT_EQ(fp_amd::e4m3fnuz_bits(1000.0f), 0x80);  // no infinity: out of range is NaN
  EXPECT_TRUE(std::isnan(fp_amd::e4m3fnuz_value(0x80)));
  EXPECT_EQ(fp_amd::e4m3fnuz_value(0x7F), 240.0f);
  EXPECT_EQ(fp_amd::e4m3fnuz_value(0xB8), -0.5f);
}

TEST(AmdElements, E4m3fnuzEveryCodeRoundTripsAndValuesAscend) {
  float prev = -1.0f;
  for (int code = 0; code < 128; ++code) {
    const float v = fp_amd::e4m3fnuz_value(static_cast<std::uint8_t>(code));
    ASSERT_GT(v, prev) << "code " << code;
    prev = v;
    ASSERT_EQ(fp_amd::e4m3fnuz_bits(v), code) << "value " << v;
    if (code > 0) {
      ASSERT_EQ(fp_amd::e4m3fnuz_bits(-v), code | 0x80) << "value " << -v;
    }
  }
}

TEST(AmdElements, E4m3fnuzRoundsToNearestTiesToEven) {
  for (int code = 1; code < 127; ++code) {
    const float lo = fp_amd::e4m3fnuz_value(static_cast<std::uint8_t>(code));
    const float hi = fp_amd::e4m3fnuz_value(static_cast<std::uint8_t>(code + 1));
    const float mid = (lo + hi) / 2;  // exact in float
    ASSERT_EQ(fp_amd::e4m3fnuz_bits(mid), (code % 2 == 0) ? code : code + 1) << "tie between " << lo << " and " << hi;
    ASSERT_EQ(fp_amd::e4m3fnuz_bits(std::nextafter(mid, lo)), code);
    ASSERT_EQ(fp_amd::e4m3fnuz_bits(std::nextafter(mid, hi)), code + 1);
  }
}

TEST(AmdElements, E4m3OcpKnownValues) {
  EXPECT_EQ(fp_amd::e4m3_bits(1.0f), 0x38);  // bias 7 (FNUZ: 0x40)
  EXPECT_EQ(fp_amd::e4m3_bits(-1.0f), 0xB8);
  EXPECT_EQ(fp_amd::e4m3_bits(448.0f), 0x7E);
  EXPECT_EQ(fp_amd::e4m3_bits(-0.0f), 0x80);  // OCP keeps the negative zero
  EXPECT_EQ(fp_amd::e4m3_bits(std::ldexp(1.0f, -9)), 0x01);  // smallest subnormal
  EXPECT_EQ(fp_amd::e4m3_bits(std::ldexp(1.0f, -6)), 0x08);  // smallest normal
  EXPECT_EQ(fp_amd::e4m3_bits(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(fp_amd::e4m3_bits(464.0f), 0x7F);   // max + half an ulp: NaN (no infinity)
  EXPECT_EQ(fp_amd::e4m3_bits(463.0f), 0x7E);
  EXPECT_TRUE(std::isnan(fp_amd::e4m3_value(0xFF)));
  EXPECT_EQ(fp_amd::e4m3_value(0xB0), -0.5f);
}

// Two independent implementations of OCP e4m3 agree: the device encoding (elements.h) and the probe
// engine's (elem_type.h, which chooses the values the probe sends), on every finite code.
TEST(AmdElements, E4m3OcpEveryCodeRoundTripsAndMatchesTheEngine) {
  float prev = -1.0f;
  for (int code = 0; code < 0x7F; ++code) {
    const float v = fp_amd::e4m3_value(static_cast<std::uint8_t>(code));
    ASSERT_GT(v, prev) << "code " << code;
    prev = v;
    ASSERT_EQ(fp_amd::e4m3_bits(v), code) << "value " << v;
    ASSERT_EQ(fp_amd::e4m3_bits(-v), code | 0x80) << "value " << -v;
    ASSERT_EQ(flashprobe::probes::round_to_elem(flashprobe::probes::ElemType::e4m3, v), v) << "code " << code;
  }
  for (int code = 1; code < 0x7E; ++code) {
    const float lo = fp_amd::e4m3_value(static_cast<std::uint8_t>(code));
    const float hi = fp_amd::e4m3_value(static_cast<std::uint8_t>(code + 1));
    const float mid = (lo + hi) / 2;
    ASSERT_EQ(fp_amd::e4m3_bits(mid), (code % 2 == 0) ? code : code + 1) << "tie between " << lo << " and " << hi;
    ASSERT_EQ(flashprobe::probes::round_to_elem(flashprobe::probes::ElemType::e4m3, mid),
              fp_amd::e4m3_value(fp_amd::e4m3_bits(mid)));
  }
}

TEST(AmdElements, FirstInexactNamesTheValue) {
  const float ok[] = {1.0f, -2.5f, 0.0f, 240.0f};
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::fp8_e4m3fnuz, ok));
  const float bad[] = {1.0f, 1.0f + 1.0f / 16};  // needs 4 mantissa bits
  const auto msg = amd::first_inexact(amd::AmdElem::fp8_e4m3fnuz, bad);
  ASSERT_TRUE(msg);
  EXPECT_NE(msg->find("index 1"), std::string::npos) << *msg;
  const float neg_zero[] = {-0.0f};
  EXPECT_TRUE(amd::first_inexact(amd::AmdElem::fp8_e4m3fnuz, neg_zero)) << "-0 would reach the GPU as +0";
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::f16, neg_zero));
  const float f16_bad[] = {2049.0f};  // 11 significant bits: exact in f32, not in f16
  EXPECT_TRUE(amd::first_inexact(amd::AmdElem::f16, f16_bad));
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::f32, f16_bad));
  const float bf16_bad[] = {257.0f};
  EXPECT_TRUE(amd::first_inexact(amd::AmdElem::bf16, bf16_bad));
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::f16, bf16_bad));
}
