// The gradient engine: one template for the exact reference (T = double) and FlashAttention-2's
// emulated backward (T = float, P and dS rounded to the input type, O and LSE from the forward).
// The finite-difference check in tests/oracle/test_backward.cpp is written independently of this file.
#include "flashprobe/oracle/backward.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "element_reader.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/reference.h"
#include "parallel.h"

namespace flashprobe::oracle {

namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Running sums of one (batch, kv head) group for GradTerms (reference only).
struct GroupStats {
  GradTerms t;
  double row_keys = 0, rows_seeing = 0;  // for dq_mean_terms
  double key_rows = 0, keys_seen = 0;    // for dk_mean_terms
};

template <class T>
class Engine {
 public:
  // emulate: bw_o / bw_lse are the forward's O (dense BSHD doubles) and LSE ([B, Hq, Sq]).
  Engine(const AttnProblem& p, const AttnInputs& in, const Tensor& dout, bool emulate, const std::vector<double>* fwd_o,
         const std::vector<double>* fwd_lse, Gradients& g)
      : p_(p), in_(in), dout_(dout), emulate_(emulate), fwd_o_(fwd_o), fwd_lse_(fwd_lse), g_(g),
        scale_(static_cast<T>(p.effective_scale())) {}

  void run() {
    const std::int64_t groups = std::int64_t{p_.batch} * p_.hkv;
    std::vector<GroupStats> stats(static_cast<std::size_t>(groups));
    double flops = 0;
    for (int b = 0; b < p_.batch; ++b) flops += 4.0 * p_.hq * p_.sq * p_.keys(b) * (p_.d + p_.dv);
    detail::parallel_for(groups, detail::threads_for(flops, groups), [&](std::int64_t g) {
      group(static_cast<int>(g / p_.hkv), static_cast<int>(g % p_.hkv), stats[static_cast<std::size_t>(g)]);
    });
    if (emulate_) return;
    GradTerms& t = g_.terms;
    double row_keys = 0, rows_seeing = 0, key_rows = 0, keys_seen = 0;
    for (const GroupStats& s : stats) {
      t.dq_terms = std::max(t.dq_terms, s.t.dq_terms);
      t.dk_terms = std::max(t.dk_terms, s.t.dk_terms);
      t.dv_terms = std::max(t.dv_terms, s.t.dv_terms);
      t.dq_plausible = std::max(t.dq_plausible, s.t.dq_plausible);
      t.dk_plausible = std::max(t.dk_plausible, s.t.dk_plausible);
      t.p_colsum = std::max(t.p_colsum, s.t.p_colsum);
      t.e_d = std::max(t.e_d, s.t.e_d);
      row_keys += s.row_keys;
      rows_seeing += s.rows_seeing;
      key_rows += s.key_rows;
      keys_seen += s.keys_seen;
    }
    t.dq_mean_terms = rows_seeing > 0 ? row_keys / rows_seeing : 0;
    t.dk_mean_terms = keys_seen > 0 ? key_rows / keys_seen : 0;
    input_stats();
    t.dq_terms *= t.k_max;
    t.dk_terms *= t.q_max;
    t.dq_plausible *= t.k_max;
    t.dk_plausible *= t.q_max;
    t.dv_terms *= t.do_max;
    t.e_d *= t.v_max;
  }

 private:
  T rounded(T v) const {
    return emulate_ && p_.dtype != DType::f32 ? static_cast<T>(round_to(p_.dtype, static_cast<double>(v))) : v;
  }

  // Largest elements and row norms of the inputs (every stored element of the problem's shape).
  void input_stats() {
    GradTerms& t = g_.terms;
    auto scan = [](const Tensor& x, const Strides& st, int B, int S, int H, int D, double& elem, double& norm) {
      const detail::ElementReader rd(x);
      for (int b = 0; b < B; ++b)
        for (int s = 0; s < S; ++s)
          for (int h = 0; h < H; ++h) {
            double n2 = 0;
            for (int c = 0; c < D; ++c) {
              const double v = rd(offset(st, b, s, h, c));
              elem = std::max(elem, std::abs(v));
              n2 += v * v;
            }
            norm = std::max(norm, std::sqrt(n2));
          }
    };
    double qn = 0, kn = 0, vn = 0, dn = 0;
    scan(in_.q, p_.q_strides(), p_.batch, p_.sq, p_.hq, p_.d, t.q_max, qn);
    scan(in_.k, p_.k_strides(), p_.batch, p_.sk, p_.hkv, p_.d, t.k_max, kn);
    scan(in_.v, p_.v_strides(), p_.batch, p_.sk, p_.hkv, p_.dv, t.v_max, vn);
    scan(dout_, p_.o_strides(), p_.batch, p_.sq, p_.hq, p_.dv, t.do_max, dn);
    t.s_max = p_.effective_scale() * qn * kn;
  }

  void group(int b, int kvh, GroupStats& st) {
    const int n = p_.keys(b), sq = p_.sq, G = p_.group();
    const Strides ks = p_.k_strides(), vs = p_.v_strides(), qs = p_.q_strides(), os = p_.o_strides();
    const detail::ElementReader rk(in_.k), rv(in_.v), rq(in_.q), rdo(dout_);
    Mat<T> K(n, p_.d), V(n, p_.dv), dK = Mat<T>::Zero(n, p_.d), dV = Mat<T>::Zero(n, p_.dv);
    for (int j = 0; j < n; ++j) {
      for (int x = 0; x < p_.d; ++x) K(j, x) = static_cast<T>(rk(offset(ks, b, j, kvh, x)));
      for (int x = 0; x < p_.dv; ++x) V(j, x) = static_cast<T>(rv(offset(vs, b, j, kvh, x)));
    }
    std::vector<std::int64_t> lo(static_cast<std::size_t>(sq)), hi(static_cast<std::size_t>(sq));
    for (int i = 0; i < sq; ++i) p_.visible_range(b, i, lo[i], hi[i]);
    const std::int64_t diag0 = p_.diag_offset(b);
    std::vector<double> col_abs(static_cast<std::size_t>(n), 0.0), col_p(static_cast<std::size_t>(n), 0.0),
        col_rows(static_cast<std::size_t>(n), 0.0), col_plaus(static_cast<std::size_t>(n), 0.0);
    const T cap = static_cast<T>(p_.softcap);

    for (int hh = 0; hh < G; ++hh) {
      const int h = kvh * G + hh;
      Mat<T> Q(sq, p_.d), dO(sq, p_.dv);
      for (int i = 0; i < sq; ++i) {
        for (int x = 0; x < p_.d; ++x) Q(i, x) = static_cast<T>(rq(offset(qs, b, i, h, x)));
        for (int x = 0; x < p_.dv; ++x) dO(i, x) = static_cast<T>(rdo(offset(os, b, i, h, x)));
      }
      Mat<T> S(sq, n), F(sq, n);  // scores, then P; F: the soft-cap factor d t / d x
      S.noalias() = Q * K.transpose();
      Mat<T> dP(sq, n);
      dP.noalias() = dO * V.transpose();
      const T slope = p_.alibi_slopes.empty() ? T(0) : static_cast<T>(p_.alibi_slopes[static_cast<std::size_t>(h)]);
      Mat<T> dS = Mat<T>::Zero(sq, n), Pr = Mat<T>::Zero(sq, n);
      for (int i = 0; i < sq; ++i) {
        if (lo[i] > hi[i]) continue;
        const std::int64_t a = lo[i], w = hi[i] - lo[i] + 1;
        for (std::int64_t j = a; j < a + w; ++j) {
          T x = S(i, j) * scale_;
          T f = T(1);
          if (cap != T(0)) {
            const T th = std::tanh(x / cap);
            x = cap * th;
            f = T(1) - th * th;
          }
          if (slope != T(0)) x -= slope * static_cast<T>(std::abs(i + diag0 - j));
          S(i, j) = x;
          F(i, j) = f;
        }
        auto s = S.row(i).segment(a, w).array();
        if (emulate_) {
          const T lse = static_cast<T>((*fwd_lse_)[(static_cast<std::size_t>(b) * p_.hq + h) * sq + i]);
          s = (s - lse).exp();
        } else {
          const T m = s.maxCoeff();
          s = (s - m).exp();
          s /= s.sum();
        }
        T D = 0;
        if (emulate_) {
          for (int x = 0; x < p_.dv; ++x)
            D += dO(i, x) * static_cast<T>((*fwd_o_)[((static_cast<std::size_t>(b) * sq + i) * p_.hq + h) * p_.dv + x]);
        } else {
          for (std::int64_t j = a; j < a + w; ++j) D += S(i, j) * dP(i, j);
        }
        for (std::int64_t j = a; j < a + w; ++j) {
          dS(i, j) = S(i, j) * (dP(i, j) - D) * F(i, j);
          Pr(i, j) = rounded(S(i, j));
        }
        if (!emulate_) {
          double row_abs = 0, row_plaus = 0;
          for (std::int64_t j = a; j < a + w; ++j) {
            const double ad = std::abs(static_cast<double>(dS(i, j)));
            const double pl = static_cast<double>(S(i, j)) *
                              (std::abs(static_cast<double>(dP(i, j))) + std::abs(static_cast<double>(D))) *
                              static_cast<double>(F(i, j));
            row_abs += ad;
            row_plaus += pl;
            col_plaus[static_cast<std::size_t>(j)] += pl;
            col_abs[static_cast<std::size_t>(j)] += ad;
            col_p[static_cast<std::size_t>(j)] += static_cast<double>(S(i, j));
            col_rows[static_cast<std::size_t>(j)] += 1;
          }
          double e = 0;
          for (int x = 0; x < p_.dv; ++x) e += std::abs(static_cast<double>(dO(i, x)));
          st.t.dq_terms = std::max(st.t.dq_terms, p_.effective_scale() * row_abs);
          st.t.dq_plausible = std::max(st.t.dq_plausible, p_.effective_scale() * row_plaus);
          st.t.e_d = std::max(st.t.e_d, e);
          st.row_keys += static_cast<double>(w);
          st.rows_seeing += 1;
        }
        for (std::int64_t j = a; j < a + w; ++j) dS(i, j) = rounded(dS(i, j));
      }
      dV.noalias() += Pr.transpose() * dO;
      Mat<T> dQ(sq, p_.d);
      dQ.noalias() = dS * K;
      dK.noalias() += dS.transpose() * Q;
      for (int i = 0; i < sq; ++i)
        for (int x = 0; x < p_.d; ++x) g_.dq[Gradients::dq_index(p_, b, i, h, x)] = rounded(dQ(i, x) * scale_);
    }
    for (int j = 0; j < n; ++j) {
      for (int x = 0; x < p_.d; ++x) g_.dk[Gradients::dk_index(p_, b, j, kvh, x)] = rounded(dK(j, x) * scale_);
      for (int x = 0; x < p_.dv; ++x) g_.dv[Gradients::dv_index(p_, b, j, kvh, x)] = rounded(dV(j, x));
      if (!emulate_ && col_rows[static_cast<std::size_t>(j)] > 0) {
        st.t.dk_terms = std::max(st.t.dk_terms, p_.effective_scale() * col_abs[static_cast<std::size_t>(j)]);
        st.t.dk_plausible = std::max(st.t.dk_plausible, p_.effective_scale() * col_plaus[static_cast<std::size_t>(j)]);
        st.t.dv_terms = std::max(st.t.dv_terms, col_p[static_cast<std::size_t>(j)]);
        st.t.p_colsum = std::max(st.t.p_colsum, col_p[static_cast<std::size_t>(j)]);
        st.key_rows += col_rows[static_cast<std::size_t>(j)];
        st.keys_seen += 1;
      }
    }
  }

  const AttnProblem& p_;
  const AttnInputs& in_;
  const Tensor& dout_;
  bool emulate_;
  const std::vector<double>* fwd_o_;
  const std::vector<double>* fwd_lse_;
  Gradients& g_;
  T scale_;
};

Gradients zero_gradients(const AttnProblem& p) {
  Gradients g;
  g.dq.assign(static_cast<std::size_t>(p.batch) * p.sq * p.hq * p.d, 0.0);
  g.dk.assign(static_cast<std::size_t>(p.batch) * p.sk * p.hkv * p.d, 0.0);
  g.dv.assign(static_cast<std::size_t>(p.batch) * p.sk * p.hkv * p.dv, 0.0);
  return g;
}

void fit(const Tensor& t, DType want, std::int64_t span, const std::string& name, const std::string& type_word) {
  if (t.dtype != want)
    throw UsageError(name + " has dtype " + std::string(dtype_name(t.dtype)) + " but the problem's " + type_word + " is " +
                     std::string(dtype_name(want)));
  if (t.size() < span)
    throw UsageError(name + " holds " + std::to_string(t.size()) + " elements but the problem's shape and strides need " +
                     std::to_string(span));
}

}  // namespace

void require_backward_inputs_fit(const AttnProblem& p, const BackwardInputs& bw) {
  require_valid(p);
  fit(bw.dout, p.out_dtype, p.o_span(), "dO", "out_dtype");
  if (!bw.o.bytes.empty()) fit(bw.o, p.out_dtype, p.o_span(), "O", "out_dtype");
  if (!bw.lse.empty() && static_cast<std::int64_t>(bw.lse.size()) != p.lse_size())
    throw UsageError("the LSE holds " + std::to_string(bw.lse.size()) + " values but [B, Hq, Sq] is " +
                     std::to_string(p.lse_size()));
}

Gradients reference_backward(const AttnProblem& p, const AttnInputs& in, const Tensor& dout) {
  require_inputs_fit(p, in);
  fit(dout, p.out_dtype, p.o_span(), "dO", "out_dtype");
  Gradients g = zero_gradients(p);
  Engine<double>(p, in, dout, false, nullptr, nullptr, g).run();
  return g;
}

Gradients emulate_backward(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw) {
  require_inputs_fit(p, in);
  require_backward_inputs_fit(p, bw);
  Reference fwd;
  if (bw.o.bytes.empty() || bw.lse.empty()) fwd = emulate_low_precision(p, in);
  std::vector<double> o = fwd.o, lse = fwd.lse;  // dense BSHD O, [B, Hq, Sq] LSE
  if (!bw.o.bytes.empty()) {
    o.assign(static_cast<std::size_t>(p.batch) * p.sq * p.hq * p.dv, 0.0);
    const Strides os = p.o_strides();
    const detail::ElementReader ro(bw.o);
    for (int b = 0; b < p.batch; ++b)
      for (int i = 0; i < p.sq; ++i)
        for (int h = 0; h < p.hq; ++h)
          for (int x = 0; x < p.dv; ++x)
            o[((static_cast<std::size_t>(b) * p.sq + i) * p.hq + h) * p.dv + x] = ro(offset(os, b, i, h, x));
  }
  if (!bw.lse.empty()) lse.assign(bw.lse.begin(), bw.lse.end());
  Gradients g = zero_gradients(p);
  Engine<float>(p, in, bw.dout, true, &o, &lse, g).run();
  return g;
}

}  // namespace flashprobe::oracle
