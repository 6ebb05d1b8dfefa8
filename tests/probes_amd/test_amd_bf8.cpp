// The bf8 (e5m2) encodings the AMD experiment kernels use on the device (elements.h): OCP e5m2 of
// gfx12 and FNUZ e5m2 of gfx940/941/942, checked on the host against independent descriptions of
// the same formats (an OCP e5m2 code is the top byte of the binary16 with the same value; FNUZ moves
// the bias from 15 to 16) and against the probe engine's e5m2 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "flashprobe/core/half.h"
#include "flashprobe/probes/amd/elements.h"
#include "flashprobe/probes/amd/run.h"
#include "flashprobe/probes/elem_type.h"

namespace amd = flashprobe::probes::amd;
namespace pr = flashprobe::probes;

TEST(AmdBf8, OcpE5m2IsTheTopByteOfBinary16) {
  for (int code = 0; code < 256; ++code) {
    const float v = fp_amd::e5m2_value(static_cast<std::uint8_t>(code));
    const double f16 = flashprobe::from_f16_bits(static_cast<std::uint16_t>(code << 8));
    if (std::isnan(f16)) {
      ASSERT_TRUE(std::isnan(v)) << "code " << code;
      continue;
    }
    ASSERT_EQ(static_cast<double>(v), f16) << "code " << code;
    ASSERT_EQ(std::signbit(v), std::signbit(f16)) << "code " << code;
    ASSERT_EQ(fp_amd::e5m2_bits(v), code) << "value " << v;  // every non-NaN code round-trips, -0 and inf too
  }
}

TEST(AmdBf8, OcpE5m2RoundsToNearestEvenAndOverflowsToInfinity) {
  EXPECT_EQ(fp_amd::e5m2_bits(1.0f), 0x3C);
  EXPECT_EQ(fp_amd::e5m2_bits(57344.0f), 0x7B);
  EXPECT_EQ(fp_amd::e5m2_bits(61439.0f), 0x7B);
  EXPECT_EQ(fp_amd::e5m2_bits(61440.0f), 0x7C);  // max + half an ulp: the tie goes to the even code, infinity
  EXPECT_EQ(fp_amd::e5m2_bits(-1e30f), 0xFC);
  EXPECT_EQ(fp_amd::e5m2_bits(std::numeric_limits<float>::quiet_NaN()), fp_amd::kE5m2NaN);
  for (int code = 0; code < 0x7B; ++code) {
    const float lo = fp_amd::e5m2_value(static_cast<std::uint8_t>(code));
    const float hi = fp_amd::e5m2_value(static_cast<std::uint8_t>(code + 1));
    const float mid = (lo + hi) / 2;  // exact in float
    ASSERT_EQ(fp_amd::e5m2_bits(mid), (code % 2 == 0) ? code : code + 1) << "tie between " << lo << " and " << hi;
    ASSERT_EQ(fp_amd::e5m2_bits(std::nextafter(mid, lo)), code);
    ASSERT_EQ(fp_amd::e5m2_bits(std::nextafter(mid, hi)), code + 1);
    // The probe engine chooses the values the probe sends with its own e5m2 rounding: both agree.
    ASSERT_EQ(pr::round_to_elem(pr::ElemType::e5m2, mid), fp_amd::e5m2_value(fp_amd::e5m2_bits(mid))) << mid;
    ASSERT_EQ(pr::round_to_elem(pr::ElemType::e5m2, lo), lo);
  }
}

TEST(AmdBf8, FnuzE5m2HasBias16NoInfinityAndOneNaN) {
  EXPECT_EQ(fp_amd::e5m2fnuz_bits(1.0f), 0x40);  // OCP: 0x3C
  EXPECT_EQ(fp_amd::e5m2fnuz_value(0x7F), 57344.0f);  // S.11111.11 is finite here
  EXPECT_EQ(fp_amd::e5m2fnuz_value(0x01), std::ldexp(1.0f, -17));
  EXPECT_TRUE(std::isnan(fp_amd::e5m2fnuz_value(0x80)));
  EXPECT_EQ(fp_amd::e5m2fnuz_bits(-0.0f), 0x00);  // no negative zero
  EXPECT_EQ(fp_amd::e5m2fnuz_bits(61440.0f), fp_amd::kE5m2fnuzNaN);  // no infinity
  EXPECT_EQ(fp_amd::e5m2fnuz_bits(std::numeric_limits<float>::infinity()), fp_amd::kE5m2fnuzNaN);
  for (int code = 1; code < 256; ++code) {
    if (code == 0x80) continue;
    const float v = fp_amd::e5m2fnuz_value(static_cast<std::uint8_t>(code));
    // Bias 16 = OCP's bias 15 plus one: half the OCP value of the same code wherever OCP is finite.
    if ((code & 0x7F) < 0x7C) {
      ASSERT_EQ(v, fp_amd::e5m2_value(static_cast<std::uint8_t>(code)) / 2) << "code " << code;
    }
    ASSERT_EQ(fp_amd::e5m2fnuz_bits(v), code) << "value " << v;
  }
}

// Every value the probe engine may send for e5m2 (small integers first) is exact in both bf8
// encodings, so the one engine type serves gfx12 (OCP) and gfx94x (FNUZ) alike.
TEST(AmdBf8, EngineValuesAreExactInBothEncodings) {
  const auto values = pr::exact_values({pr::ElemType::e5m2}, 100);
  std::vector<float> v(values.begin(), values.end());
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::bf8_e5m2, v));
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::bf8_e5m2fnuz, v));
  const float nine[] = {9.0f};
  EXPECT_TRUE(amd::first_inexact(amd::AmdElem::bf8_e5m2, nine));
  EXPECT_TRUE(amd::first_inexact(amd::AmdElem::bf8_e5m2fnuz, nine));
  const float neg_zero[] = {-0.0f};
  EXPECT_TRUE(amd::first_inexact(amd::AmdElem::bf8_e5m2fnuz, neg_zero)) << "-0 would reach the GPU as +0";
  EXPECT_FALSE(amd::first_inexact(amd::AmdElem::bf8_e5m2, neg_zero));
}
