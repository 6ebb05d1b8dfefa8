#include "flashprobe/core/tensor.h"

#include <cstring>
#include <random>

#include "flashprobe/core/half.h"

namespace flashprobe {

double Tensor::get(std::int64_t i) const {
  if (dtype == DType::f32) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * i, 2);
  return from_bits16(dtype, h);
}

void Tensor::set(std::int64_t i, double v) {
  if (dtype == DType::f32) {
    const float f = static_cast<float>(v);
    std::memcpy(bytes.data() + 4 * i, &f, 4);
    return;
  }
  const std::uint16_t h = to_bits16(dtype, v);
  std::memcpy(bytes.data() + 2 * i, &h, 2);
}

namespace {
// Fills element i with a nonzero draw of mag * N(0, 1) rounded to the tensor's dtype: encoded once
// (a draw that rounds to +-0 is redrawn), so each element costs one draw and one rounding.
void set_nonzero_normal(Tensor& t, std::int64_t i, std::mt19937_64& rng, std::normal_distribution<double>& nd,
                        double mag) {
  if (t.dtype == DType::f32) {
    float f;
    do f = static_cast<float>(mag * nd(rng));
    while (f == 0.0f);
    std::memcpy(t.bytes.data() + 4 * i, &f, 4);
    return;
  }
  std::uint16_t h;
  do h = to_bits16(t.dtype, mag * nd(rng));
  while ((h & 0x7FFF) == 0);
  std::memcpy(t.bytes.data() + 2 * i, &h, 2);
}

// Calls f(j, x, i) for every element of K in (batch, key, head, dim) order: key j, dim x, element
// index i at p.k_strides(). (The order fixes which draw goes where for the jittered keys.)
template <class F>
void for_each_key_element(const AttnProblem& p, F f) {
  const Strides ks = p.k_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h)
        for (int x = 0; x < p.d; ++x) f(j, x, offset(ks, b, j, h, x));
}
}  // namespace

Tensor random_normal(DType t, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  Tensor out(t, n);
  for (std::int64_t i = 0; i < n; ++i) set_nonzero_normal(out, i, rng, nd, 1.0);
  return out;
}

AttnInputs random_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  AttnInputs in{Tensor(p.dtype, p.q_span()), Tensor(p.dtype, p.k_span()), Tensor(p.dtype, p.v_span())};
  for (std::int64_t i = 0; i < in.q.size(); ++i) set_nonzero_normal(in.q, i, rng, nd, dist.magnitude);
  for (std::int64_t i = 0; i < in.v.size(); ++i) set_nonzero_normal(in.v, i, rng, nd, 1.0);
  if (dist.key_jitter < 0) {
    for (std::int64_t i = 0; i < in.k.size(); ++i) set_nonzero_normal(in.k, i, rng, nd, dist.magnitude);
  } else {
    std::vector<double> base(static_cast<std::size_t>(p.d));
    for (auto& x : base) x = dist.magnitude * nd(rng);
    for_each_key_element(p, [&](int, int x, std::int64_t i) {
      in.k.set(i, base[static_cast<std::size_t>(x)] + dist.key_jitter * nd(rng));
    });
  }
  if (dist.key_ramp > 0) {
    for_each_key_element(p, [&](int j, int, std::int64_t i) {
      in.k.set(i, in.k.get(i) * (1.0 + dist.key_ramp * j));  // |value| grows: never rounds to zero
    });
  }
  return in;
}

}  // namespace flashprobe
