// Simulated backward kernels: scalar fp32 code in FlashAttention-2's order (key blocks outer).
#include "flashprobe/oracle/simulated_backward.h"

#include <algorithm>
#include <cmath>

#include "element_reader.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/reference.h"
#include "sim_arith.h"

namespace flashprobe::oracle {

namespace {

constexpr float kLog2e = 1.4426950408889634f;

using Vec = std::vector<float>;

class SimBwd {
 public:
  SimBwd(const SimBwdConfig& c, const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw)
      : c_(c), p_(p), in_(in), bw_(bw) {}

  KernelGradients run() {
    KernelGradients g{Tensor(p_.dtype, p_.q_span()), Tensor(p_.dtype, p_.k_span()), Tensor(p_.dtype, p_.v_span())};
    for (int b = 0; b < p_.batch; ++b)
      for (int kvh = 0; kvh < p_.hkv; ++kvh) group(b, kvh, g);
    return g;
  }

 private:
  double out(float v) const {
    return c_.truncate ? detail::round_toward_zero(p_.dtype, v) : round_to(p_.dtype, v);
  }
  float rounded(float v) const { return p_.dtype == DType::f32 ? v : static_cast<float>(round_to(p_.dtype, v)); }
  float dot(const float* a, const float* b, int n) const { return detail::fp32_dot(a, b, n, 1, c_.dot_chunk); }

  // The keys row i may see in the backward: the mask's range, or without the causal bound (the bug).
  void range(int b, int i, std::int64_t& lo, std::int64_t& hi) const {
    p_.visible_range(b, i, lo, hi);
    if (!c_.no_causal || p_.causal == Causal::none) return;
    const std::int64_t diag = i + p_.diag_offset(b);
    std::int64_t l = 0, h = p_.keys(b) - 1;
    mask::narrow<std::int64_t>(diag, false, p_.window_left, p_.window_right, l, h);
    lo = l;
    hi = h;
  }

  void group(int b, int kvh, KernelGradients& g) {
    const int n = p_.keys(b), G = p_.group(), D = p_.d, Dv = p_.dv;
    const Strides qs = p_.q_strides(), ks = p_.k_strides(), vs = p_.v_strides(), os = p_.o_strides();
    const detail::ElementReader rq(in_.q), rk(in_.k), rv(in_.v), rdo(bw_.dout), ro(bw_.o);
    Vec K(static_cast<std::size_t>(n) * D), V(static_cast<std::size_t>(n) * Dv);
    for (int j = 0; j < n; ++j) {
      for (int x = 0; x < D; ++x) K[static_cast<std::size_t>(j) * D + x] = static_cast<float>(rk(offset(ks, b, j, kvh, x)));
      for (int x = 0; x < Dv; ++x) V[static_cast<std::size_t>(j) * Dv + x] = static_cast<float>(rv(offset(vs, b, j, kvh, x)));
    }
    Vec dK(K.size(), 0.f), dV(V.size(), 0.f);
    const float scale = static_cast<float>(p_.effective_scale()), cap = static_cast<float>(p_.softcap);
    const int blocks = (n + c_.block_k - 1) / c_.block_k;
    for (int hh = 0; hh < G; ++hh) {
      const int h = kvh * G + hh;
      if (c_.gqa_unsummed) std::fill(dK.begin(), dK.end(), 0.f), std::fill(dV.begin(), dV.end(), 0.f);
      const float slope = p_.alibi_slopes.empty() ? 0.f : static_cast<float>(p_.alibi_slopes[static_cast<std::size_t>(h)]);
      for (int i = 0; i < p_.sq; ++i) {
        Vec q(static_cast<std::size_t>(D)), dO(static_cast<std::size_t>(Dv)), o(static_cast<std::size_t>(Dv));
        for (int x = 0; x < D; ++x) q[x] = static_cast<float>(rq(offset(qs, b, i, h, x)));
        for (int x = 0; x < Dv; ++x) {
          dO[x] = static_cast<float>(rdo(offset(os, b, i, h, x)));
          o[x] = static_cast<float>(ro(offset(os, b, i, h, x)));
        }
        const float Di = dot(dO.data(), o.data(), Dv);
        const float lse = bw_.lse[(static_cast<std::size_t>(b) * p_.hq + h) * p_.sq + i];
        std::int64_t lo, hi;
        range(b, i, lo, hi);
        std::vector<Vec> parts(static_cast<std::size_t>(blocks), Vec(static_cast<std::size_t>(D), 0.f));
        for (std::int64_t j = std::max<std::int64_t>(lo, 0); j <= hi; ++j) {
          const float* kj = &K[static_cast<std::size_t>(j) * D];
          float s = dot(q.data(), kj, D) * scale, f = 1.f;
          if (cap != 0.f) {
            const float th = std::tanh(s / cap);
            s = cap * th;
            if (!c_.no_softcap_grad) f = 1.f - th * th;
          }
          if (slope != 0.f) s -= slope * static_cast<float>(std::abs(i + p_.diag_offset(b) - j));
          const float P = c_.exp2 ? std::exp2(s * kLog2e - lse * kLog2e) : std::exp(s - lse);
          const float Pr = rounded(P);
          for (int x = 0; x < Dv; ++x) dV[static_cast<std::size_t>(j) * Dv + x] += Pr * dO[x];
          const float dP = dot(dO.data(), &V[static_cast<std::size_t>(j) * Dv], Dv);
          const float dS = rounded((c_.no_rowsum_d ? P * dP : P * (dP - Di)) * f);
          for (int x = 0; x < D; ++x) dK[static_cast<std::size_t>(j) * D + x] += dS * q[x];
          Vec& part = parts[static_cast<std::size_t>(j / c_.block_k)];
          for (int x = 0; x < D; ++x) part[x] += dS * kj[x];
        }
        Vec dq(static_cast<std::size_t>(D), 0.f);
        for (int t = 0; t < blocks; ++t) {
          const int blk = c_.dq_reverse ? blocks - 1 - t : t;
          if (c_.dq_race && blk == 1 && i % 2 == 1) continue;
          for (int x = 0; x < D; ++x) dq[x] += parts[static_cast<std::size_t>(blk)][x];
        }
        for (int x = 0; x < D; ++x) g.dq.set(offset(qs, b, i, h, x), out(dq[x] * scale));
      }
    }
    for (int j = 0; j < n; ++j) {
      for (int x = 0; x < D; ++x)
        g.dk.set(offset(ks, b, j, kvh, x), out(dK[static_cast<std::size_t>(j) * D + x] * (c_.dk_unscaled ? 1.f : scale)));
      for (int x = 0; x < Dv; ++x) g.dv.set(offset(vs, b, j, kvh, x), out(dV[static_cast<std::size_t>(j) * Dv + x]));
    }
    // Keys past this batch's length are zero gradients.
    for (int j = n; j < p_.sk; ++j) {
      for (int x = 0; x < D; ++x) g.dk.set(offset(ks, b, j, kvh, x), 0.0);
      for (int x = 0; x < Dv; ++x) g.dv.set(offset(vs, b, j, kvh, x), 0.0);
    }
  }

  const SimBwdConfig& c_;
  const AttnProblem& p_;
  const AttnInputs& in_;
  const BackwardInputs& bw_;
};

std::vector<SimulatedBackward> make_kernels() {
  std::vector<SimulatedBackward> v;
  auto add = [&](std::string name, bool correct, std::string what, SimBwdConfig c) {
    v.push_back({std::move(name), correct, std::move(what), c});
  };
  SimBwdConfig c;
  add("fa2_b64", true, "key blocks of 64, sequential fp32 sums", c);
  c = {}; c.block_k = 128; c.exp2 = true;
  add("fa2_b128_exp2", true, "key blocks of 128, exp2 with log2(e) folded in", c);
  c = {}; c.block_k = 16; c.dot_chunk = 16;
  add("fa2_b16_chunk16", true, "key blocks of 16, tensor-core-like 16-term chunks", c);
  c = {}; c.block_k = 32; c.dq_reverse = true;
  add("fa2_b32_dqrev", true, "key blocks of 32, dQ's block updates added last first", c);
  c = {}; c.block_k = 128; c.dot_chunk = 8; c.exp2 = true; c.dq_reverse = true;
  add("fa2_b128_chunk8_exp2_dqrev", true, "all of the above at once", c);
  const SimBwdConfig base;
  c = base; c.no_rowsum_d = true;
  add("bwd_no_rowsum_d", false, "dS = P dP: rowsum(dO ∘ O) not subtracted", c);
  c = base; c.gqa_unsummed = true;
  add("bwd_gqa_unsummed", false, "dK, dV from the last query head of the group only", c);
  c = base; c.no_softcap_grad = true;
  add("bwd_softcap_grad_missing", false, "the soft-cap derivative 1 - tanh² left out", c);
  c = base; c.no_causal = true;
  add("bwd_causal_missing", false, "the backward ignores the causal mask", c);
  c = base; c.truncate = true;
  add("bwd_truncate", false, "gradients rounded toward zero", c);
  c = base; c.dq_race = true;
  add("bwd_dq_race", false, "odd rows lose key block 1's dQ update", c);
  c = base; c.dk_unscaled = true;
  add("bwd_dk_unscaled", false, "dK not multiplied by the softmax scale", c);
  return v;
}

}  // namespace

const std::vector<SimulatedBackward>& simulated_backward_kernels() {
  static const std::vector<SimulatedBackward> v = make_kernels();
  return v;
}

const SimulatedBackward& simulated_backward_kernel(const std::string& name) {
  for (const auto& k : simulated_backward_kernels())
    if (k.name == name) return k;
  std::string all;
  for (const auto& k : simulated_backward_kernels()) all += (all.empty() ? "" : ", ") + k.name;
  throw UsageError("unknown simulated backward kernel '" + name + "'; known: " + all);
}

KernelGradients run_simulated_backward(const SimulatedBackward& k, const AttnProblem& p, const AttnInputs& in,
                                       const BackwardInputs& bw) {
  require_inputs_fit(p, in);
  require_backward_inputs_fit(p, bw);
  if (bw.o.bytes.empty() || bw.lse.empty())
    throw UsageError("a simulated backward kernel reads the forward's O and LSE: give both");
  return SimBwd(k.cfg, p, in, bw).run();
}

}  // namespace flashprobe::oracle
