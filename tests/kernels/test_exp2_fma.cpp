// exp2_fma (kernels/src/exp2_fma.h): 2^x on the FMA units, as the variant mma/small=fma computes part
// of each row's P. The function the kernel runs, evaluated on the CPU (the device gives the same bits:
// the header says why), against 2^x in long double.
//
// Why [-1, 0] is every input: exp2_fma(x) = p(f) * 2^n with n = rint(x), f = x - n. For x in [-1, 0]
// f runs over every float in [-0.5, 0] and every multiple of 2^-24 in (0, 0.5]; for x < -1, f is a
// multiple of ulp(x) >= 2^-23 in [-0.5, 0.5], so a value already met. The relative error of p(f) * 2^n
// is p(f)'s while the result is normal (a power-of-two scaling is exact), and ScalingIsExact checks
// that the kernel's integer trick computes exactly that product, or 0 below 2^-126, for every n.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "src/exp2_fma.h"

namespace flashprobe::kernels::dev {
namespace {

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// An aggregate without member initialisers (zeroed by `Worst w{}`): clang's target_clones
// (HIP's host compiler) calls a non-trivial constructor from each clone and never emits it.
struct Worst {
  double rel;
  float x;
  long long not_one;  // |x| < 2^-25 whose result is not exactly 1
};

// Every float x in [-1, 0]: the relative error against 2^x for |x| >= 2^-25; for smaller |x| (2^x
// rounds to 1 there) the result must be exactly 1, checked for every float down to 2^-40 and below
// that for every float whose low 12 mantissa bits are 0: there p(f) = fma(q, f, 1) with |q f| <
// 2^-40, which rounds to 1 whatever q is (the argument; the sampled floats check it). The reference
// walks each binade by one multiplication per float (2^(x - u) = 2^x * 2^-u in double), reseeded
// with exp2 every 4096 floats: its own error stays below 2^-40, far below what is measured. An
// FMA-capable clone where the CPU has one (software fmaf is several times slower): same IEEE results.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("fma", "default")))
#endif
Worst scan_minus_one_to_zero() {
  Worst w{};
  const std::uint32_t tiny = bits(-0x1p-25f), last = bits(-1.f), every = bits(-0x1p-40f);
  for (std::uint32_t u = bits(-0.f); u < tiny; u += u < every ? 4096u : 1u)
    if (exp2_fma(from_bits(u)) != 1.f) ++w.not_one;
  double ref = 0, step = 0;
  for (std::uint32_t u = tiny; u <= last; ++u) {
    const float x = from_bits(u);
    if ((u & 4095u) == 0 || u == tiny || (u & 0x7FFFFFu) == 0) {
      ref = std::exp2(static_cast<double>(x));
      step = std::exp2(-static_cast<double>(std::nextafter(std::fabs(x), 2.f) - std::fabs(x)));
    } else {
      ref *= step;
    }
    const double rel = std::fabs(static_cast<double>(exp2_fma(x)) - ref) / ref;
    if (rel > w.rel) {
      w.rel = rel;
      w.x = x;
    }
  }
  return w;
}

TEST(Exp2Fma, EveryReducedArgumentWithinTheBound) {
  const Worst w = scan_minus_one_to_zero();
  EXPECT_EQ(w.not_one, 0) << "|x| < 2^-25 must give exactly 1 (2^x rounds to 1 there)";
  EXPECT_LE(w.rel, kExp2FmaMaxRelError) << "max relative error 2^" << std::log2(w.rel) << " at x = " << w.x
                                        << " (degree " << kExp2FmaDegree << ")";
  // What the header claims (a cut degree gives 2^-14, the bound is 2^-22): the measured maximum.
  EXPECT_LT(w.rel, std::exp2(-22.4)) << "2^" << std::log2(w.rel);
  EXPECT_GT(w.rel, 0x1p-23) << "the walk found nothing: 2^" << std::log2(w.rel);
}

// exp2_fma(x) == p(f) * 2^n exactly, n = rint(x) (ties to even), f = x - n, or 0 where that product
// is below 2^-126 (ex2.approx.ftz's flush), for every n in [-128, 0] and f on a grid of 2^-12 (x = n + f
// exact in float). p(f) is exp2_fma(f) (n = 0 there, or f = +-0.5).
TEST(Exp2Fma, ScalingIsExact) {
  long long checked = 0, failed = 0;
  for (int n = -128; n <= 0; ++n)
    for (int k = -2048; k <= 2048; ++k) {
      const float x = static_cast<float>(n) + static_cast<float>(k) * 0x1p-12f;
      const float nn = std::nearbyint(x), f = x - nn;
      const float p = exp2_fma(f);
      ASSERT_TRUE(std::fabs(f) <= 0.5f && (p > 0.70f && p < 1.42f)) << f;
      float want = std::ldexp(p, static_cast<int>(nn));
      if (want < FLT_MIN || nn < -127.f) want = 0.f;
      if (x <= -127.f) want = 0.f;
      ++checked;
      if (exp2_fma(x) != want && ++failed <= 5)
        ADD_FAILURE() << "x = " << x << ": " << exp2_fma(x) << ", want " << want;
    }
  EXPECT_EQ(failed, 0) << "of " << checked;
}

TEST(Exp2Fma, EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp2_fma(-inf), 0.f) << "a masked score";
  EXPECT_EQ(exp2_fma(0.f), 1.f) << "the row max: P exactly 1";
  EXPECT_EQ(exp2_fma(-0.f), 1.f);
  EXPECT_EQ(exp2_fma(-1.f), 0.5f);
  EXPECT_EQ(exp2_fma(-126.f), FLT_MIN) << "the smallest normal is kept";
  for (const float x : {-126.25f, -126.5f, -126.9f, -127.f, -127.5f, -149.f, -200.f, -1e30f, -FLT_MAX})
    EXPECT_EQ(exp2_fma(x), 0.f) << x << ": below 2^-126 flushes, as ex2.approx.ftz";
  EXPECT_EQ(exp2_fma(-125.f), 0x1p-125f);
  EXPECT_EQ(exp2_fma(8.f), 256.f) << "x slightly above 0 (a rounding of s*f - m*f) and up to 127 work";
  EXPECT_NEAR(exp2_fma(1e-7f), 1.f, 1e-6f);
  EXPECT_EQ(kExp2FmaDegree, 5);
}

}  // namespace
}  // namespace flashprobe::kernels::dev
