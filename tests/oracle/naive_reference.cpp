#include "naive_reference.h"

#include <cmath>
#include <limits>

namespace flashprobe::test {

NaiveInputs to_long_double(const AttnInputs& in) {
  auto cvt = [](const Tensor& t) {
    std::vector<long double> v(static_cast<std::size_t>(t.size()));
    for (std::int64_t i = 0; i < t.size(); ++i) v[static_cast<std::size_t>(i)] = static_cast<long double>(t.get(i));
    return v;
  };
  return {cvt(in.q), cvt(in.k), cvt(in.v)};
}

NaiveResult naive_attention(const AttnProblem& p, const AttnInputs& in) { return naive_attention(p, to_long_double(in)); }

NaiveResult naive_attention(const AttnProblem& p, const NaiveInputs& in) {
  NaiveResult r;
  r.o.assign(static_cast<std::size_t>(p.batch) * p.sq * p.hq * p.dv, 0.0L);
  r.lse.assign(static_cast<std::size_t>(p.batch) * p.hq * p.sq, -std::numeric_limits<long double>::infinity());
  const long double scale = p.scale != 0 ? static_cast<long double>(p.scale) : 1.0L / std::sqrt(static_cast<long double>(p.d));
  const Strides qs = p.q.is_zero() ? Strides{std::int64_t{p.sq} * p.hq * p.d, std::int64_t{p.hq} * p.d, p.d, 1} : p.q;
  const Strides ks = p.k.is_zero() ? Strides{std::int64_t{p.sk} * p.hkv * p.d, std::int64_t{p.hkv} * p.d, p.d, 1} : p.k;
  const Strides vs = p.v.is_zero() ? Strides{std::int64_t{p.sk} * p.hkv * p.dv, std::int64_t{p.hkv} * p.dv, p.dv, 1} : p.v;
  auto at = [](const Strides& s, long long b, long long t, long long h, long long x) {
    return b * s.b + t * s.s + h * s.h + x * s.d;
  };
  for (int b = 0; b < p.batch; ++b) {
    const long long nk = p.seqlens_k.empty() ? p.sk : p.seqlens_k[static_cast<std::size_t>(b)];
    const long long diag0 = p.causal == Causal::top_left ? 0 : nk - p.sq;  // key on the diagonal of row 0
    for (int h = 0; h < p.hq; ++h) {
      const int kvh = h / (p.hq / p.hkv);
      for (int i = 0; i < p.sq; ++i) {
        const long long diag = i + diag0;
        std::vector<long double> s;
        std::vector<long long> keys;
        for (long long j = 0; j < nk; ++j) {
          if (p.causal != Causal::none && j > diag) continue;
          if (p.window_left >= 0 && j < diag - p.window_left) continue;
          if (p.window_right >= 0 && j > diag + p.window_right) continue;
          long double dot = 0;
          for (int x = 0; x < p.d; ++x)
            dot += in.q[static_cast<std::size_t>(at(qs, b, i, h, x))] * in.k[static_cast<std::size_t>(at(ks, b, j, kvh, x))];
          long double v = scale * dot;
          if (p.softcap != 0) v = static_cast<long double>(p.softcap) * std::tanh(v / static_cast<long double>(p.softcap));
          if (!p.alibi_slopes.empty())
            v -= static_cast<long double>(p.alibi_slopes[static_cast<std::size_t>(h)]) * std::fabs(static_cast<long double>(diag - j));
          s.push_back(v);
          keys.push_back(j);
        }
        if (s.empty()) continue;
        // docs/attention-semantics.md: a NaN or +inf score poisons the row, all -inf sees no key.
        const long double inf = std::numeric_limits<long double>::infinity();
        bool poisoned = false, any = false;
        long double m = -inf;
        for (auto v : s) {
          if (std::isnan(v) || v == inf) poisoned = true;
          else if (v > -inf) { any = true; m = std::max(m, v); }
        }
        const std::size_t row = (static_cast<std::size_t>(b) * p.sq + i) * p.hq + h;
        if (poisoned) {
          for (int x = 0; x < p.dv; ++x) r.o[row * p.dv + x] = std::numeric_limits<long double>::quiet_NaN();
          r.lse[(static_cast<std::size_t>(b) * p.hq + h) * p.sq + i] = std::numeric_limits<long double>::quiet_NaN();
          continue;
        }
        if (!any) continue;
        long double l = 0;
        for (auto& v : s) l += (v = std::exp(v - m));
        for (int x = 0; x < p.dv; ++x) {
          long double acc = 0;
          for (std::size_t t = 0; t < s.size(); ++t) acc += s[t] * in.v[static_cast<std::size_t>(at(vs, b, keys[t], kvh, x))];
          r.o[((static_cast<std::size_t>(b) * p.sq + i) * p.hq + h) * p.dv + x] = acc / l;
        }
        r.lse[(static_cast<std::size_t>(b) * p.hq + h) * p.sq + i] = m + std::log(l);
      }
    }
  }
  return r;
}

}  // namespace flashprobe::test
