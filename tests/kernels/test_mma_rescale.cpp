// The mma kernel's conditional rescale threshold (kernels/src/mma/mma_rescale.h): the shipped
// ("always") is -inf (every growth of a row's max rescales, so a row's test (mnew - m) * f > threshold
// is true for any finite growth, including 0, and false for -inf - -inf = NaN); the variant
// mma/rescale=lazy keeps P at most 2^8 (its name is parsed in variants.cpp, test_variants.cpp); and
// which head dims compile the conditional form. What the kernel does with it is checked on the
// GPU: the property suite against the oracle, and scripts/gpu/mma-rescale-mutants (a kernel that
// never rescales after a row's first scores, or forgets l, must fail it).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "src/mma/mma_rescale.h"

namespace flashprobe::kernels::dev {
namespace {

TEST(MmaRescale, Threshold) {
  // The default is "always": -inf, every growth of a row's max rescales (FlashAttention-2's numerics).
  for (const float t : {mma_rescale_log2(), mma_rescale_log2(MmaRescale::always)}) EXPECT_TRUE(std::isinf(t) && t < 0);
  EXPECT_EQ(mma_rescale_log2(MmaRescale::lazy), kMmaRescaleLog2);
  EXPECT_EQ(kMmaRescaleLog2, 8.f);
  const float always = mma_rescale_log2(MmaRescale::always);
  // The kernel's test, as written there, on the values it meets.
  const float inf = std::numeric_limits<float>::infinity();
  const auto grows = [](float mnew, float m, float f, float t) { return (mnew - m) * f > t; };
  EXPECT_TRUE(grows(0.f, 0.f, 0.1f, always)) << "always: no growth still rescales";
  EXPECT_TRUE(grows(3.f, -inf, 0.1f, kMmaRescaleLog2)) << "a row's first scores always rescale";
  EXPECT_FALSE(grows(-inf, -inf, 0.1f, always)) << "a row that has seen nothing never rescales";
  EXPECT_FALSE(grows(80.f, 0.f, 0.1f, kMmaRescaleLog2)) << "growth 8.0: P reaches exactly 2^8, kept";
  EXPECT_TRUE(grows(81.f, 0.f, 0.1f, kMmaRescaleLog2));
}

TEST(MmaRescale, ConditionalOnlyAtD128) {
  EXPECT_FALSE(mma_lazy_rescale<64>()) << "D = 64 keeps the unconditional rescale (measured faster)";
  EXPECT_FALSE(mma_lazy_rescale<80>()) << "D = 80, 96, 256: the default with the vote measured slower";
  EXPECT_FALSE(mma_lazy_rescale<96>());
  EXPECT_TRUE(mma_lazy_rescale<128>());
  EXPECT_FALSE(mma_lazy_rescale<256>());
}

}  // namespace
}  // namespace flashprobe::kernels::dev
