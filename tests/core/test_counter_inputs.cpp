// The counter-based input generator (counter_rng.h, counter_inputs.h): pinned bits (a recorded case
// seed must replay the same inputs, and the device fill is checked against these functions), the
// normal distribution it claims, and the input kinds (rising and near-identical keys).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "flashprobe/core/counter_inputs.h"
#include "flashprobe/core/half.h"
#include "../common/test_problem.h"

namespace flashprobe {
namespace {

using namespace counter_rng;

std::uint32_t bits_at(const Tensor& t, std::int64_t i) {
  std::uint32_t b = 0;
  std::memcpy(&b, t.bytes.data() + static_cast<std::size_t>(i) * dtype_size(t.dtype), dtype_size(t.dtype));
  return b;
}

TEST(CounterRng, PinnedBits) {
  // Changing any of these changes every recorded case's inputs (flashprobe_cases' Case::make_inputs).
  const std::int32_t* t = normal_table();
  EXPECT_EQ(t[0], 11316060);           // q = 1/2: z = 0.67449 * 2^24
  EXPECT_EQ(t[kSteps], 0);             // q = 1
  EXPECT_EQ(t[kTableSize - 1], 151068830);  // q = 2^-62: z = 9.004
  EXPECT_EQ(hash(1, 2, 3, 0), 0x0f30f6e84382caf8ULL);
  EXPECT_EQ(normal(hash(1, 2, 3, 0), t), 26178060);
  const std::uint32_t want[3][5] = {{0x2e42, 0xbd0a, 0x3385, 0xbdf7, 0x3e11},
                                    {0x3dc8, 0xbfa1, 0x3e71, 0xbfbf, 0x3fc2},
                                    {0x3dc832c8, 0xbfa14a04, 0x3e70a5f4, 0xbfbedb9c, 0x3fc2135d}};
  const std::uint64_t idx[5] = {0, 1, 2, 1000, 123456789};
  for (int dt = 0; dt < 3; ++dt) {
    Spec s;
    s.seed = 20261126;
    s.dtype = dt;
    for (int i = 0; i < 5; ++i) EXPECT_EQ(plain_bits(s, kQ, idx[i], 1.0, t), want[dt][i]) << "dtype " << dt << " index " << idx[i];
  }
  Spec s;
  s.seed = 20261126;
  s.magnitude = 16;
  s.key_ramp = 1.0 / 32;
  EXPECT_EQ(key_bits(s, 5, 0, 5, t), 0xc958u);
  EXPECT_EQ(key_bits(s, 5, 100, 5, t), 0xd183u);
  s.key_ramp = 0;
  s.key_jitter = 1.0 / 64;
  s.magnitude = 1;
  EXPECT_EQ(key_bits(s, 5, 0, 5, t), 0xb96cu);
  EXPECT_EQ(key_bits(s, 133, 1, 5, t), 0xb963u);
}

TEST(CounterRng, TableHoldsTheNormalQuantiles) {
  // Two-sided tail probability q at octave o, step m: q = 2^-(o+1) (1 + m / 64).
  const std::int32_t* t = normal_table();
  auto z = [&](int o, int m) { return std::ldexp(static_cast<double>(t[o * (kSteps + 1) + m]), -kZBits); };
  EXPECT_NEAR(z(0, 0), 0.6744897501960817, 1e-7);        // q = 0.5
  EXPECT_NEAR(z(4, 38), 1.9616376339009494, 1e-7);       // q = 2^-5 * (1 + 38/64)
  EXPECT_NEAR(z(9, 0), 3.2971933456919635, 1e-7);        // q = 2^-10
  EXPECT_NEAR(z(29, 0), 6.12075628597194, 1e-6);         // q = 2^-30 (Python's statistics.NormalDist)
  for (int o = 0; o < kOctaves; ++o)
    for (int m = 0; m < kSteps; ++m) ASSERT_GT(t[o * (kSteps + 1) + m], t[o * (kSteps + 1) + m + 1]) << o << " " << m;
}

TEST(CounterRng, DrawsAreStandardNormal) {
  const std::int32_t* t = normal_table();
  const int n = 1 << 20;
  std::vector<double> v(n);
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  long tail3 = 0, tail4 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = std::ldexp(static_cast<double>(normal(hash(99, kV, static_cast<std::uint64_t>(i), 0), t)), -kZBits);
    v[static_cast<std::size_t>(i)] = x;
    s1 += x, s2 += x * x, s3 += x * x * x, s4 += x * x * x * x;
    tail3 += std::fabs(x) > 3;
    tail4 += std::fabs(x) > 4;
  }
  const double mean = s1 / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0, 0.005);
  EXPECT_NEAR(var, 1, 0.005);
  EXPECT_NEAR(s3 / n, 0, 0.02);
  EXPECT_NEAR(s4 / n, 3, 0.04);
  // P(|Z| > 3) = 0.0026998, P(|Z| > 4) = 6.334e-5: about 2831 and 66 of 2^20 draws.
  EXPECT_NEAR(tail3, 2831, 250);
  EXPECT_NEAR(tail4, 66, 35);
  // Kolmogorov-Smirnov distance to the normal CDF (critical value at 0.1 %: 1.95 / sqrt(n) = 0.0019).
  std::sort(v.begin(), v.end());
  double ks = 0;
  for (int i = 0; i < n; i += 7) {
    const double cdf = 0.5 * std::erfc(-v[static_cast<std::size_t>(i)] / std::sqrt(2.0));
    ks = std::max({ks, std::fabs(cdf - double(i) / n), std::fabs(cdf - double(i + 1) / n)});
  }
  EXPECT_LT(ks, 0.0019);
}

TEST(CounterRng, StreamsAndSeedsAreIndependent) {
  const std::int32_t* t = normal_table();
  const int n = 1 << 16;
  double qk = 0, s01 = 0;
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::uint64_t>(i);
    const double q = std::ldexp(static_cast<double>(normal(hash(5, kQ, u, 0), t)), -kZBits);
    const double k = std::ldexp(static_cast<double>(normal(hash(5, kK, u, 0), t)), -kZBits);
    const double q6 = std::ldexp(static_cast<double>(normal(hash(6, kQ, u, 0), t)), -kZBits);
    qk += q * k;
    s01 += q * q6;
  }
  EXPECT_NEAR(qk / n, 0, 0.02);   // 5 standard errors of a product of independent N(0, 1)
  EXPECT_NEAR(s01 / n, 0, 0.02);
}

AttnProblem padded_problem(DType t) {
  AttnProblem p = flashprobe::testing::test_problem(2, 4, 2, 5, 70, 24, t);
  p.k = contiguous_strides(TensorLayout::bhsd, 80, p.hkv, 40);  // BHSD, rows padded to 40, room for 80 keys
  return p;
}

TEST(CounterInputs, EveryElementIsItsOwnDrawAndNeverZero) {
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    const AttnProblem p = padded_problem(dt);
    InputDist d;
    d.magnitude = 8;
    const AttnInputs in = counter_inputs(p, 42, d);
    const Spec s = counter_spec(p, 42, d);
    const std::int32_t* t = normal_table();
    for (std::int64_t i = 0; i < in.q.size(); ++i) {
      ASSERT_EQ(bits_at(in.q, i), plain_bits(s, kQ, static_cast<std::uint64_t>(i), 8, t));
      ASSERT_NE(in.q.get(i), 0.0);
    }
    for (std::int64_t i = 0; i < in.k.size(); ++i) {
      ASSERT_EQ(bits_at(in.k, i), plain_bits(s, kK, static_cast<std::uint64_t>(i), 8, t));
      ASSERT_NE(in.k.get(i), 0.0);
    }
    for (std::int64_t i = 0; i < in.v.size(); ++i) {
      ASSERT_EQ(bits_at(in.v, i), plain_bits(s, kV, static_cast<std::uint64_t>(i), 1, t));
      ASSERT_NE(in.v.get(i), 0.0);
    }
    EXPECT_EQ(counter_inputs(p, 42, d).k.bytes, in.k.bytes);
    EXPECT_NE(counter_inputs(p, 43, d).k.bytes, in.k.bytes);
  }
}

TEST(CounterInputs, RisingKeysAreThePlainKeysScaledAlongTheSequence) {
  const AttnProblem p = padded_problem(DType::f16);
  InputDist plain, rising;
  plain.magnitude = rising.magnitude = 8;
  rising.key_ramp = 1.0 / 32;
  const AttnInputs a = counter_inputs(p, 3, plain), r = counter_inputs(p, 3, rising);
  EXPECT_EQ(a.q.bytes, r.q.bytes);
  EXPECT_EQ(a.v.bytes, r.v.bytes);
  std::set<std::int64_t> logical;
  const Strides ks = p.k_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h)
        for (int x = 0; x < p.d; ++x) {
          const std::int64_t i = offset(ks, b, j, h, x);
          logical.insert(i);
          ASSERT_EQ(r.k.get(i), round_to(DType::f16, a.k.get(i) * (1.0 + j / 32.0))) << "key " << j;
        }
  for (std::int64_t i = 0; i < a.k.size(); ++i)
    if (!logical.count(i)) {
      ASSERT_EQ(bits_at(r.k, i), bits_at(a.k, i)) << "padding keeps the plain draw";
    }
}

TEST(CounterInputs, NearIdenticalKeysShareOneVectorPerDimension) {
  const AttnProblem p = padded_problem(DType::f32);
  InputDist d;
  d.key_jitter = 1.0 / 64;
  const AttnInputs in = counter_inputs(p, 11, d);
  const Strides ks = p.k_strides();
  std::vector<double> first(static_cast<std::size_t>(p.d));
  double spread = 0, across = 0;
  for (int x = 0; x < p.d; ++x) first[static_cast<std::size_t>(x)] = in.k.get(offset(ks, 0, 0, 0, x));
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h)
        for (int x = 0; x < p.d; ++x) {
          const double v = in.k.get(offset(ks, b, j, h, x));
          ASSERT_NE(v, 0.0);
          spread = std::max(spread, std::fabs(v - first[static_cast<std::size_t>(x)]));
        }
  for (int x = 1; x < p.d; ++x) across = std::max(across, std::fabs(first[static_cast<std::size_t>(x)] - first[0]));
  EXPECT_LT(spread, 12.0 / 64);  // two jitters of at most ~6 standard deviations
  EXPECT_GT(spread, 1.0 / 64);
  EXPECT_GT(across, 0.5);        // the dimensions differ by the vector's own N(0, 1) spread
}

}  // namespace
}  // namespace flashprobe
