// fp16/bf16 conversions, exhaustively over all 65536 bit patterns of each type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "flashprobe/core/half.h"

using namespace flashprobe;

namespace {
bool is_nan16(DType t, std::uint16_t b) { return std::isnan(from_bits16(t, b)); }
float bits_to_float(std::uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// Independent reference for bf16: the widely used integer rounding of the float's bits.
std::uint16_t bf16_reference(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
}  // namespace

class Half16 : public ::testing::TestWithParam<DType> {};

TEST_P(Half16, EveryPatternRoundTrips) {
  const DType t = GetParam();
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double v = from_bits16(t, bits);
    if (std::isnan(v)) {
      ASSERT_TRUE(is_nan16(t, to_bits16(t, v))) << "NaN pattern " << b;
      ASSERT_TRUE(is_nan16(t, to_bits16(t, static_cast<float>(v))));
      continue;
    }
    ASSERT_EQ(to_bits16(t, v), bits) << "pattern " << b << " value " << v;
    ASSERT_EQ(to_bits16(t, static_cast<float>(v)), bits) << "pattern " << b << " through float";
  }
}

// Between each pair of neighbouring finite values: the midpoint ties to the even one, and the nearest
// doubles on either side of it round to the nearer neighbour.
TEST_P(Half16, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  const DType t = GetParam();
  for (std::uint32_t b = 0; b < 0x7FFF; ++b) {
    const double lo = from_bits16(t, static_cast<std::uint16_t>(b));
    const double hi = from_bits16(t, static_cast<std::uint16_t>(b + 1));
    if (!std::isfinite(lo) || std::isnan(hi)) continue;
    for (double sign : {1.0, -1.0}) {
      const std::uint16_t s = sign < 0 ? 0x8000 : 0;
      const double mid = sign * (std::isinf(hi) ? lo + (lo - from_bits16(t, static_cast<std::uint16_t>(b - 1))) / 2
                                                : (lo + hi) / 2);
      const std::uint16_t even = (b % 2 == 0) ? static_cast<std::uint16_t>(b) : static_cast<std::uint16_t>(b + 1);
      ASSERT_EQ(to_bits16(t, mid), static_cast<std::uint16_t>(even | s)) << "midpoint above pattern " << b;
      ASSERT_EQ(to_bits16(t, std::nextafter(mid, 0.0)), static_cast<std::uint16_t>(b | s)) << "below midpoint " << b;
      ASSERT_EQ(to_bits16(t, std::nextafter(mid, sign * INFINITY)), static_cast<std::uint16_t>((b + 1) | s))
          << "above midpoint " << b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, Half16, ::testing::Values(DType::f16, DType::bf16),
                         [](const auto& i) { return std::string(dtype_name(i.param)); });

TEST(Half, F16AgreesWithCompilerFloat16OnEveryFloatNearEachPattern) {
  // GCC's _Float16 conversion is an independent implementation of the same rounding.
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const double v = from_f16_bits(static_cast<std::uint16_t>(b));
    if (std::isnan(v)) continue;
    for (float f : {static_cast<float>(v), std::nextafter(static_cast<float>(v), 1e30f),
                    std::nextafter(static_cast<float>(v), -1e30f)}) {
      const _Float16 h = static_cast<_Float16>(f);
      std::uint16_t hb;
      std::memcpy(&hb, &h, 2);
      ASSERT_EQ(to_f16_bits(f), hb) << "float " << f;
    }
  }
}

TEST(Half, BF16AgreesWithIntegerRoundingReference) {
  for (std::uint32_t hi = 0; hi < 65536; ++hi)
    for (std::uint32_t lo : {0u, 1u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const float f = bits_to_float((hi << 16) | lo);
      if (std::isnan(f)) continue;
      ASSERT_EQ(to_bf16_bits(f), bf16_reference(f)) << std::hex << ((hi << 16) | lo);
    }
}

// Decoding against independent definitions: a bf16 pattern is the float with those high 16 bits, an
// f16 pattern is what the compiler's _Float16 holds.
TEST(Half, EveryPatternDecodesAsTheCompilerAndTheFloatBitsSay) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float bf = bits_to_float(b << 16);
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    const float hf = static_cast<float>(h);
    if (std::isnan(bf)) ASSERT_TRUE(std::isnan(from_bf16_bits(bits))) << b;
    else ASSERT_EQ(from_bf16_bits(bits), static_cast<double>(bf)) << b;
    if (std::isnan(hf)) ASSERT_TRUE(std::isnan(from_f16_bits(bits))) << b;
    else ASSERT_EQ(from_f16_bits(bits), static_cast<double>(hf)) << b;
    ASSERT_EQ(std::signbit(from_f16_bits(bits)), (b & 0x8000) != 0) << b;
  }
}

TEST(Half, SpecialValues) {
  EXPECT_EQ(to_f16_bits(65504.0), 0x7BFF);
  EXPECT_EQ(to_f16_bits(65520.0), 0x7C00);  // exactly half an ulp above max: ties to even = Inf
  EXPECT_EQ(to_f16_bits(-INFINITY), 0xFC00);
  EXPECT_EQ(to_f16_bits(-0.0), 0x8000);
  EXPECT_EQ(to_f16_bits(std::ldexp(1.0, -25)), 0x0000);  // half the smallest subnormal: ties to zero
  EXPECT_EQ(to_f16_bits(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(to_bf16_bits(INFINITY), 0x7F80);
  EXPECT_TRUE(std::isnan(from_bf16_bits(to_bf16_bits(NAN))));
  EXPECT_EQ(to_bf16_bits_truncate(1.00390625f * 1.5f), 0x3FC0);  // truncation drops the rounding bit
  EXPECT_EQ(round_to(DType::bf16, 1.0 + 1.0 / 256 + 1e-9), 1.0 + 1.0 / 128);
}
