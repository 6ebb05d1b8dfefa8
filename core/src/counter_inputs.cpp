#include "flashprobe/core/counter_inputs.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace flashprobe {

namespace {

// z with P(|Z| > z) = q for Z ~ N(0, 1), q in (0, 1]: Newton's method on log erfc(z / sqrt 2) = log q.
double two_sided_quantile(double q) {
  if (q >= 1) return 0;
  const double r2 = std::sqrt(2.0), c = std::sqrt(2.0 / 3.14159265358979323846);
  double z = std::sqrt(-2 * std::log(q));
  for (int i = 0; i < 200; ++i) {
    const double e = std::erfc(z / r2);
    const double slope = -c * std::exp(-z * z / 2) / e;  // d/dz log erfc(z / sqrt 2)
    const double step = (std::log(e) - std::log(q)) / slope;
    z -= step;
    if (std::fabs(step) < 1e-15 * (1 + z)) break;
  }
  return z;
}

template <class Bits>
void fill_plain(Tensor& t, const counter_rng::Spec& s, std::uint32_t stream, double magnitude, const std::int32_t* table) {
  std::uint8_t* out = t.bytes.data();
  const std::int64_t n = t.size();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto bits = static_cast<Bits>(counter_rng::plain_bits(s, stream, static_cast<std::uint64_t>(i), magnitude, table));
    std::memcpy(out + sizeof(Bits) * static_cast<std::size_t>(i), &bits, sizeof(Bits));
  }
}

void fill_plain(Tensor& t, const counter_rng::Spec& s, std::uint32_t stream, double magnitude) {
  if (t.dtype == DType::f32) fill_plain<std::uint32_t>(t, s, stream, magnitude, counter_rng::normal_table());
  else fill_plain<std::uint16_t>(t, s, stream, magnitude, counter_rng::normal_table());
}

}  // namespace

namespace counter_rng {
const std::int32_t* normal_table() {
  static const std::vector<std::int32_t> table = [] {
    std::vector<std::int32_t> t(kTableSize);
    for (int o = 0; o < kOctaves; ++o)
      for (int m = 0; m <= kSteps; ++m) {
        const double q = std::ldexp(1.0 + static_cast<double>(m) / kSteps, -(o + 1));
        t[static_cast<std::size_t>(o * (kSteps + 1) + m)] =
            static_cast<std::int32_t>(std::llround(std::ldexp(two_sided_quantile(q), kZBits)));
      }
    return t;
  }();
  return table.data();
}
}  // namespace counter_rng

counter_rng::Spec counter_spec(const AttnProblem& p, std::uint64_t seed, const InputDist& dist) {
  // The problem's id (FNV-1a) mixed into the seed: a shrunk problem draws fresh values, as a
  // sequential stream would, rather than a prefix of the larger problem's (shrinking needs that).
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const char ch : p.id()) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001B3ULL;
  const DType t = p.dtype;
  counter_rng::Spec s;
  s.seed = seed ^ counter_rng::mix64(h);
  s.dtype = static_cast<int>(t);
  s.magnitude = dist.magnitude;
  s.key_jitter = dist.key_jitter;
  s.key_ramp = dist.key_ramp;
  return s;
}

AttnInputs counter_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist) {
  const counter_rng::Spec s = counter_spec(p, seed, dist);
  AttnInputs in{Tensor(p.dtype, p.q_span()), Tensor(p.dtype, p.k_span()), Tensor(p.dtype, p.v_span())};
  fill_plain(in.q, s, counter_rng::kQ, dist.magnitude);
  fill_plain(in.k, s, counter_rng::kK, dist.magnitude);
  fill_plain(in.v, s, counter_rng::kV, 1.0);
  if (counter_rng::keys_have_kind(s)) {
    const std::int32_t* table = counter_rng::normal_table();
    const Strides ks = p.k_strides();
    const std::size_t es = dtype_size(p.dtype);
    for (int b = 0; b < p.batch; ++b)
      for (int j = 0; j < p.sk; ++j)
        for (int h = 0; h < p.hkv; ++h)
          for (int x = 0; x < p.d; ++x) {
            const std::int64_t i = offset(ks, b, j, h, x);
            const std::uint32_t bits = counter_rng::key_bits(s, static_cast<std::uint64_t>(i), j, x, table);
            if (es == 4) std::memcpy(in.k.bytes.data() + 4 * i, &bits, 4);
            else {
              const auto h16 = static_cast<std::uint16_t>(bits);
              std::memcpy(in.k.bytes.data() + 2 * i, &h16, 2);
            }
          }
  }
  return in;
}

}  // namespace flashprobe
