// Simulated kernels: scalar fp32 code written the way GPU attention kernels are, one row at a time.
#include "flashprobe/oracle/simulated.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "element_reader.h"
#include "sim_arith.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"

namespace flashprobe::oracle {

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

using detail::round_toward_zero;

// The next value of type t above x (x representable in t).
double one_ulp_up(DType t, double x) {
  if (!std::isfinite(x)) return x;
  if (t == DType::f32) return std::nextafter(static_cast<float>(x), INFINITY);
  if (x == 0) return from_bits16(t, 1);  // the smallest subnormal, from +0 and -0
  const std::uint16_t bits = to_bits16(t, x);
  return from_bits16(t, static_cast<std::uint16_t>(x > 0 ? bits + 1 : bits - 1));  // sign-magnitude
}

struct Row {
  std::vector<float> acc;  // unnormalised P·V
  float m = -std::numeric_limits<float>::infinity();
  float l = 0;
};

class Sim {
 public:
  Sim(const SimConfig& c, const AttnProblem& p, const AttnInputs& in) : c_(c), p_(p), in_(in) {}

  AttnOutputs run() {
    AttnOutputs out{Tensor(p_.out_dtype, p_.o_span()), std::vector<float>(static_cast<std::size_t>(p_.lse_size()))};
    const Strides qs = p_.q_strides(), ks = p_.k_strides(), vs = p_.v_strides(), os = p_.o_strides();
    const detail::ElementReader rq(in_.q), rk(in_.k), rv(in_.v);
    for (int b = 0; b < p_.batch; ++b)
      for (int h = 0; h < p_.hq; ++h) {
        const int kvh = c_.wrong_gqa ? h % p_.hkv : p_.kv_head(h);
        const int n = p_.keys(b);
        K_.assign(static_cast<std::size_t>(n) * p_.d, 0.f);
        V_.assign(static_cast<std::size_t>(n) * p_.dv, 0.f);
        for (int j = 0; j < n; ++j) {
          for (int x = 0; x < p_.d; ++x) K_[static_cast<std::size_t>(j) * p_.d + x] = static_cast<float>(rk(offset(ks, b, j, kvh, x)));
          for (int x = 0; x < p_.dv; ++x) V_[static_cast<std::size_t>(j) * p_.dv + x] = static_cast<float>(rv(offset(vs, b, j, kvh, x)));
        }
        for (int i = 0; i < p_.sq; ++i) {
          std::vector<float> q(static_cast<std::size_t>(p_.d));
          for (int x = 0; x < p_.d; ++x) q[x] = static_cast<float>(rq(offset(qs, b, i, h, x)));
          float lse;
          std::vector<float> o = row(b, h, i, q, lse);
          for (int x = 0; x < p_.dv; ++x) {
            double v = c_.truncate ? round_toward_zero(p_.out_dtype, o[x]) : round_to(p_.out_dtype, o[x]);
            if (c_.out_via_f16 && p_.out_dtype == DType::f32) v = round_to(DType::f16, o[x]);
            if (c_.ulp_up) v = one_ulp_up(p_.out_dtype, v);
            out.o.set(offset(os, b, i, h, x), v);
          }
          out.lse[(static_cast<std::size_t>(b) * p_.hq + h) * p_.sq + i] = lse;
        }
      }
    return out;
  }

 private:
  float dot(const float* a, const float* b, int n, int stride) const {
    return detail::fp32_dot(a, b, n, static_cast<std::size_t>(stride), c_.dot_chunk);
  }

  float round_p(float v) const {
    if (p_.dtype == DType::f32) return v;
    return static_cast<float>(c_.truncate ? round_toward_zero(p_.dtype, v) : round_to(p_.dtype, v));
  }

  // Scores are kept in the exponent's base: natural (exp) or base 2 (exp2, scale folded with log2 e).
  float score(int b, int h, int i, int j, const std::vector<float>& q) const {
    float s = dot(q.data(), &K_[static_cast<std::size_t>(j) * p_.d], p_.d, 1);
    const float scale = static_cast<float>(p_.effective_scale());
    if (c_.scale_twice) s *= scale;
    if (p_.softcap != 0) {
      const float cap = static_cast<float>(p_.softcap);
      s = cap * std::tanh(s * (scale / cap));
    } else {
      s *= scale;
    }
    if (!p_.alibi_slopes.empty()) {
      const std::int64_t diag = i + diag_offset(b);
      s -= static_cast<float>(p_.alibi_slopes[static_cast<std::size_t>(h)]) * static_cast<float>(std::abs(diag - j));
    }
    return c_.exp2 ? s * kLog2e : s;
  }
  float ex(float x) const { return c_.exp2 ? std::exp2(x) : std::exp(x); }

  std::int64_t diag_offset(int b) const {
    return (c_.top_left && p_.causal == Causal::bottom_right) ? 0 : p_.diag_offset(b);
  }

  void range(int b, int i, std::int64_t& lo, std::int64_t& hi) const {
    AttnProblem q = p_;
    if (c_.top_left && q.causal == Causal::bottom_right) q.causal = Causal::top_left;
    q.visible_range(b, i, lo, hi);
    if (p_.causal != Causal::none && c_.mask_shift) hi = std::min<std::int64_t>(hi + c_.mask_shift, p_.keys(b) - 1);
    if (c_.drop_last_key && lo <= hi) --hi;
  }

  // Online softmax over [lo, hi] in tiles aligned to block_k.
  Row partial(int b, int h, int i, const std::vector<float>& q, std::int64_t lo, std::int64_t hi) const {
    Row r;
    r.acc.assign(static_cast<std::size_t>(p_.dv), 0.f);
    if (lo > hi) return r;
    const std::int64_t bk = c_.block_k > 0 ? c_.block_k : hi - lo + 1;
    const std::int64_t first = c_.block_k > 0 ? (lo / bk) * bk : lo;
    std::vector<float> s, pl;
    for (std::int64_t j0 = first; j0 <= hi; j0 += bk) {
      const std::int64_t a = std::max(j0, lo), e = std::min(j0 + bk - 1, hi);
      s.clear();
      for (std::int64_t j = a; j <= e; ++j) s.push_back(score(b, h, i, static_cast<int>(j), q));
      float mt = *std::max_element(s.begin(), s.end());
      std::size_t pads = 0;
      if (c_.pad_pow2) {  // padding lanes of a power-of-two reduction contribute score 0
        std::size_t w = 1;
        while (w < s.size()) w *= 2;
        pads = w - s.size();
        if (pads) mt = std::max(mt, 0.f);
      }
      const float m_new = std::max(r.m, mt);
      const float corr = r.m == -std::numeric_limits<float>::infinity() ? 0.f : ex(r.m - m_new);
      float lt = 0;
      pl.resize(s.size());
      for (std::size_t t = 0; t < s.size(); ++t) {
        const float pv = ex(s[t] - m_new);
        lt += pv;  // the row sum uses the fp32 probabilities
        pl[t] = round_p(pv);
      }
      if (pads) lt += static_cast<float>(pads) * ex(-m_new);
      r.l = r.l * corr + lt;
      for (int x = 0; x < p_.dv; ++x)
        r.acc[x] = r.acc[x] * corr + dot(pl.data(), &V_[static_cast<std::size_t>(a) * p_.dv + x], static_cast<int>(pl.size()), p_.dv);
      r.m = m_new;
    }
    return r;
  }

  std::vector<float> row(int b, int h, int i, const std::vector<float>& q, float& lse) const {
    std::int64_t lo, hi;
    range(b, i, lo, hi);
    std::vector<float> o(static_cast<std::size_t>(p_.dv), 0.f);
    if (lo > hi) {
      lse = -std::numeric_limits<float>::infinity();
      return o;
    }
    const float scale = static_cast<float>(p_.effective_scale());
    auto to_lse = [&](const Row& r) {  // natural-log LSE of a partial result
      const float m = c_.exp2 ? r.m * kLn2 : r.m;
      return (c_.scale_twice_lse ? m * scale : m) + std::log(r.l);
    };
    if (c_.splits <= 1) {
      const Row r = partial(b, h, i, q, lo, hi);
      const float inv = 1.0f / r.l;
      for (int x = 0; x < p_.dv; ++x) o[x] = c_.reciprocal ? r.acc[x] * inv : r.acc[x] / r.l;
      lse = to_lse(r);
      return o;
    }
    // Split-KV: each split normalises on its own (fp32 partial O and LSE); the merge weights them.
    const std::int64_t n = hi - lo + 1, per = (n + c_.splits - 1) / c_.splits;
    std::vector<std::vector<float>> parts;
    std::vector<float> lses;
    for (std::int64_t a = lo; a <= hi; a += per) {
      const Row r = partial(b, h, i, q, a, std::min(hi, a + per - 1));
      std::vector<float> po(static_cast<std::size_t>(p_.dv));
      for (int x = 0; x < p_.dv; ++x) po[x] = r.acc[x] / r.l;
      parts.push_back(po);
      lses.push_back(to_lse(r));
    }
    const float mx = *std::max_element(lses.begin(), lses.end());
    float sum = 0;
    for (float v : lses) sum += std::exp(v - mx);
    lse = mx + std::log(sum);
    for (std::size_t t = 0; t < parts.size(); ++t) {
      const float w = std::exp(lses[t] - lse);
      for (int x = 0; x < p_.dv; ++x) o[x] += w * parts[t][x];
    }
    return o;
  }

  const SimConfig& c_;
  const AttnProblem& p_;
  const AttnInputs& in_;
  std::vector<float> K_, V_;
};

std::vector<SimulatedKernel> make_catalogue() {
  std::vector<SimulatedKernel> v;
  auto ok = [&](std::string name, std::string what, SimConfig c) { v.push_back({std::move(name), true, std::move(what), c}); };
  auto bug = [&](std::string name, std::string what, SimConfig c) {
    c.block_k = c.block_k ? c.block_k : 64;
    v.push_back({std::move(name), false, std::move(what), c});
  };
  ok("threepass", "whole-row softmax, sequential fp32 dot products", {});
  ok("flash_bk16", "online softmax over 16-key tiles", {.block_k = 16});
  ok("flash_bk48", "online softmax over 48-key tiles (not a power of two)", {.block_k = 48});
  ok("flash_bk64_exp2", "64-key tiles, exp2 with scale*log2(e) folded into the scores", {.block_k = 64, .exp2 = true});
  ok("flash_bk128_mma", "128-key tiles, tensor-core-like 16-term chunks with truncating fp32 accumulation, 1/l",
     {.block_k = 128, .exp2 = true, .dot_chunk = 16, .reciprocal = true});
  ok("flash_bk32_recip", "32-key tiles, O = acc * (1/l)", {.block_k = 32, .reciprocal = true});
  ok("splitkv4_bk64", "split-KV in 4 parts of 64-key tiles, merged through the LSE", {.block_k = 64, .splits = 4});
  ok("splitkv3_mma", "split-KV in 3 parts, tensor-core-like chunks, exp2", {.block_k = 32, .exp2 = true, .dot_chunk = 16, .splits = 3});
  bug("mask_off_by_one", "causal: one key past the diagonal is visible", {.mask_shift = 1});
  bug("top_left_causal", "causal aligned top-left instead of bottom-right", {.top_left = true});
  bug("scale_twice", "scores multiplied by the scale twice", {.scale_twice = true});
  bug("scale_twice_lse", "LSE = scale * m + log(l), m already scaled (O correct)", {.scale_twice_lse = true});
  bug("bf16_truncation", "P and O rounded toward zero instead of to nearest", {.truncate = true});
  bug("dropped_last_key", "the last visible key of every row is skipped", {.drop_last_key = true});
  bug("wrong_gqa_head", "query head h reads kv head h % hkv", {.wrong_gqa = true});
  bug("f32_out_via_f16", "an f32 O rounded to f16 on its way out (observable with f32 outputs only)",
      {.out_via_f16 = true});
  bug("one_ulp_up", "O rounded to nearest, then one ulp up (toward +inf) everywhere", {.ulp_up = true});
  bug("pad_pow2_softmax", "power-of-two padding of the row reduction contributes score 0 (the Sk = 3 bug)",
      {.block_k = 1 << 20, .pad_pow2 = true});
  return v;
}

}  // namespace

const std::vector<SimulatedKernel>& simulated_kernels() {
  static const std::vector<SimulatedKernel> v = make_catalogue();
  return v;
}

const SimulatedKernel& simulated_kernel(const std::string& name) {
  for (const auto& k : simulated_kernels())
    if (k.name == name) return k;
  throw UsageError("unknown simulated kernel '" + name + "'");
}

AttnOutputs run_simulated(const SimulatedKernel& k, const AttnProblem& p, const AttnInputs& in) {
  require_valid(p);
  return Sim(k.cfg, p, in).run();
}

}  // namespace flashprobe::oracle
