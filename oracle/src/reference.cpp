// The oracle's engine: one template for the double reference (T = double, exact P) and the
// low-precision emulation (T = float, P rounded to the input type, O rounded to the output type).
// The naive long-double implementation in tests/oracle is written independently of this file.
#include "flashprobe/oracle/reference.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "element_reader.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "parallel.h"
#include "round_inline.h"
#include "work.h"

namespace flashprobe::oracle {

namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Query rows per Eigen product: big enough for the blocked GEMM to run near its peak, small enough
// that causal blocks do not compute many masked scores.
constexpr int kRowBlock = 64;

// The most K/V (with V*V) that Engine::run holds for all (batch, kv head) groups at once.
constexpr double kAllGroupsBytes = 256.0 * (1 << 20);

// o_sens counts this many fp32 roundings at a score's magnitude on its way into the softmax weights:
// the dot product's last one, the scale, a split's LSE (m + log l) and the split merge's exp argument.
constexpr double kScoreRoundings = 4;
// ... and this many at the row's |LSE| for a split-KV merge's common weight error: exp(lse_t - lse)
// is not renormalised, so the rounding of the merged lse scales the whole row.
constexpr double kLseRoundings = 1;

// The magnitude at which a soft-capped score's kScoreRoundings roundings count, per key: the dot
// product's rounding (at most 2^-16 |dot| for D <= 256 in fp32, a bound on |x - x_fp32|) passes through
// cap * tanh(x / cap), whose slope sech^2 is at most its value at the smallest |x| that rounding can
// reach; the scale's, a split's m + log l and the merge's exp argument round the capped score
// |cap tanh(x / cap)| plus ALiBi. Without the damping, scores of 1e5 (large logits) under a cap of 5
// gave a bound of several max|V| (cannot bound) to a correct kernel's O and too little to its LSE.
template <class T>
T capped_magnitude(T dot, T x, T cap, T bias) {
  const T reach = std::max(T(0), std::abs(x) - std::ldexp(dot, -16)) / std::abs(cap);
  const T ch = std::cosh(reach);
  const T slope = std::isfinite(ch) ? T(1) / (ch * ch) : T(0);
  const T capped = std::abs(cap * std::tanh(x / cap)) + bias;
  return (dot * slope + (kScoreRoundings - 1) * capped) / kScoreRoundings;
}

using detail::parallel_for;
using detail::threads_for;

template <class T>
class Engine {
 public:
  Engine(const AttnProblem& p, const AttnInputs& in, const std::vector<int>& qrows, Reference& out, bool emulate)
      : p_(p), in_(in), qrows_(qrows), out_(out), emulate_(emulate), scale_(static_cast<T>(p.effective_scale())) {}

  void run() {
    const int R = static_cast<int>(qrows_.size());
    const std::int64_t groups = std::int64_t{p_.batch} * p_.hkv;
    const int blocks = (R + kRowBlock - 1) / kRowBlock;
    const int threads = threads_for(detail::engine_work(p_, R), groups * p_.group() * blocks);
    if (threads == 1 || groups >= 2 * threads) {
      parallel_for(groups, std::min<std::int64_t>(threads, groups), [&](std::int64_t g) {
        KV kv;
        load_kv(static_cast<int>(g / p_.hkv), static_cast<int>(g % p_.hkv), kv);
        for (int hh = 0; hh < p_.group(); ++hh)
          for (int blk = 0; blk < blocks; ++blk)
            unit(static_cast<int>(g / p_.hkv), static_cast<int>(g % p_.hkv) * p_.group() + hh, blk, kv);
      });
      return;
    }
    // Fewer groups than twice the threads, their K/V together small enough: every group's K/V loaded
    // first (the groups at once, each split by keys), then every (group, query head, row block) unit
    // on the pool at once. One group at a time left threads idle wherever a group holds fewer units
    // than threads (MHA, a few row blocks: 2 of 16 threads busy).
    double kv_bytes = 0;
    for (int b = 0; b < p_.batch; ++b) kv_bytes += static_cast<double>(p_.keys(b)) * p_.hkv * (p_.d + 2.0 * p_.dv) * sizeof(T);
    if (groups > 1 && kv_bytes <= kAllGroupsBytes) {
      std::vector<KV> kvs(static_cast<std::size_t>(groups));
      const int per_group = std::max<int>(1, threads / static_cast<int>(groups));
      parallel_for(groups, std::min<std::int64_t>(threads, groups), [&](std::int64_t g) {
        load_kv(static_cast<int>(g / p_.hkv), static_cast<int>(g % p_.hkv), kvs[static_cast<std::size_t>(g)], per_group);
      });
      const std::int64_t per = std::int64_t{p_.group()} * blocks;
      parallel_for(groups * per, threads, [&](std::int64_t u) {
        const std::int64_t g = u / per, w = u % per;
        unit(static_cast<int>(g / p_.hkv), static_cast<int>(g % p_.hkv) * p_.group() + static_cast<int>(w / blocks),
             static_cast<int>(w % blocks), kvs[static_cast<std::size_t>(g)]);
      });
      return;
    }
    // Else one group's K/V at a time, shared among all threads, its rows split.
    for (std::int64_t g = 0; g < groups; ++g) {
      const int b = static_cast<int>(g / p_.hkv), kvh = static_cast<int>(g % p_.hkv);
      KV kv;
      load_kv(b, kvh, kv, threads);
      parallel_for(std::int64_t{p_.group()} * blocks, threads, [&](std::int64_t u) {
        unit(b, kvh * p_.group() + static_cast<int>(u / blocks), static_cast<int>(u % blocks), kv);
      });
    }
  }

 private:
  struct KV {
    Mat<T> K, V, V2;                 // V2 = V * V elementwise (sensitivity only)
    std::vector<T> knorm;            // |k_j| (sensitivity only)
    std::vector<int> vbad;           // vbad[j] = number of keys before j with a non-finite V element
  };

  bool sens() const { return !emulate_; }

  // threads > 1: the keys in chunks on the pool's threads (each key's row is its own; the same values).
  void load_kv(int b, int kvh, KV& kv, int threads = 1) const {
    const int n = p_.keys(b);
    const Strides ks = p_.k_strides(), vs = p_.v_strides();
    const detail::ElementReader rk(in_.k), rv(in_.v);
    kv.K.resize(n, p_.d);
    kv.V.resize(n, p_.dv);
    std::vector<char> bad(static_cast<std::size_t>(n), 0);
    if (sens()) {
      kv.V2.resize(n, p_.dv);
      kv.knorm.resize(static_cast<std::size_t>(n));
    }
    constexpr int kKeys = 64;
    const std::int64_t chunks = (n + kKeys - 1) / kKeys;
    parallel_for(chunks, std::min<std::int64_t>(threads, chunks), [&](std::int64_t c) {
      for (int j = static_cast<int>(c) * kKeys; j < std::min(n, static_cast<int>(c + 1) * kKeys); ++j) {
        for (int x = 0; x < p_.d; ++x) kv.K(j, x) = static_cast<T>(rk(offset(ks, b, j, kvh, x)));
        for (int x = 0; x < p_.dv; ++x) kv.V(j, x) = static_cast<T>(rv(offset(vs, b, j, kvh, x)));
        bad[static_cast<std::size_t>(j)] = !kv.V.row(j).allFinite();
        if (sens()) {
          kv.V2.row(j) = kv.V.row(j).cwiseProduct(kv.V.row(j));
          kv.knorm[static_cast<std::size_t>(j)] = kv.K.row(j).norm();
        }
      }
    });
    kv.vbad.assign(static_cast<std::size_t>(n) + 1, 0);
    for (int j = 0; j < n; ++j)
      kv.vbad[static_cast<std::size_t>(j) + 1] = kv.vbad[static_cast<std::size_t>(j)] + bad[static_cast<std::size_t>(j)];
  }

  void unit(int b, int h, int blk, const KV& kv) {
    const int R = static_cast<int>(qrows_.size());
    block(b, h, blk * kRowBlock, std::min(kRowBlock, R - blk * kRowBlock), kv);
  }

  // P (rows of S over [L, L + len)) times W: one product, or row by row over each row's own visible
  // keys when a V row in the range is non-finite (a masked key's 0 must not meet its Inf or NaN).
  void times(const Mat<T>& S, const Mat<T>& W, const KV& kv, std::int64_t L, Eigen::Index len,
             const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& hi, const std::vector<char>& live,
             Mat<T>& out) const {
    out.resize(S.rows(), W.cols());
    if (kv.vbad[static_cast<std::size_t>(L + len)] == kv.vbad[static_cast<std::size_t>(L)]) {
      out.noalias() = S * W.middleRows(L, len);
      return;
    }
    out.setZero();
    for (Eigen::Index r = 0; r < S.rows(); ++r)
      if (live[static_cast<std::size_t>(r)]) {
        const Eigen::Index a = lo[r] - L, w = hi[r] - lo[r] + 1;
        out.row(r).noalias() = S.row(r).segment(a, w) * W.middleRows(lo[r], w);
      }
  }

  // Result rows [r0, r0 + n) of batch b, query head h, as one pair of products over the union of
  // their visible ranges. When that union is mostly masked (sampled rows far apart under a causal
  // mask), the block is halved: rows come sorted, so halves have tighter unions.
  void block(int b, int h, int r0, int n, const KV& kv) {
    std::vector<std::int64_t> lo(static_cast<std::size_t>(n)), hi(static_cast<std::size_t>(n));
    std::int64_t L = std::numeric_limits<std::int64_t>::max(), H = -1;
    for (int r = 0; r < n; ++r) {
      p_.visible_range(b, qrows_[static_cast<std::size_t>(r0 + r)], lo[r], hi[r]);
      if (lo[r] <= hi[r]) {
        L = std::min(L, lo[r]);
        H = std::max(H, hi[r]);
      }
    }
    if (H < 0) {  // no row of this block sees a key
      for (int r = 0; r < n; ++r) write_empty(b, h, r0 + r);
      return;
    }
    const Eigen::Index len = H - L + 1;
    if (n >= 16) {
      double visible = 0;
      for (int r = 0; r < n; ++r) visible += static_cast<double>(std::max<std::int64_t>(0, hi[r] - lo[r] + 1));
      if (visible < 0.6 * static_cast<double>(n) * static_cast<double>(len)) {
        block(b, h, r0, n / 2, kv);
        block(b, h, r0 + n / 2, n - n / 2, kv);
        return;
      }
    }

    const Strides qs = p_.q_strides();
    const detail::ElementReader rq(in_.q);
    Mat<T> Q(n, p_.d);
    for (int r = 0; r < n; ++r)
      for (int x = 0; x < p_.d; ++x) Q(r, x) = static_cast<T>(rq(offset(qs, b, qrows_[static_cast<std::size_t>(r0 + r)], h, x)));

    Mat<T> S(n, len);
    S.noalias() = Q * kv.K.middleRows(L, len).transpose();

    enum Row : char { kEmpty = 0, kLive = 1, kNan = 2 };
    std::vector<char> state(static_cast<std::size_t>(n), kEmpty);
    std::vector<T> precap;
    std::vector<std::int64_t> top(static_cast<std::size_t>(n), 0);  // the key of largest score (o_top)
    std::vector<T> m(static_cast<std::size_t>(n)), l(static_cast<std::size_t>(n)), smax(static_cast<std::size_t>(n), T(0));  // o_sens: a_max + ln n
    const T cap = static_cast<T>(p_.softcap);
    const bool alibi = !p_.alibi_slopes.empty();
    const T slope = alibi ? static_cast<T>(p_.alibi_slopes[static_cast<std::size_t>(h)]) : T(0);
    const T inf = std::numeric_limits<T>::infinity();
    for (int r = 0; r < n; ++r) {
      if (lo[r] > hi[r]) {
        S.row(r).setZero();
        continue;
      }
      const Eigen::Index a = lo[r] - L, w = hi[r] - lo[r] + 1;
      const std::int64_t diag = qrows_[r0 + r] + p_.diag_offset(b);
      auto s = S.row(r).segment(a, w).array();
      s *= scale_;
      if (sens() && cap != T(0)) {  // the pre-cap scores, for the soft-cap's damping of their rounding
        precap.resize(static_cast<std::size_t>(w));
        for (Eigen::Index t = 0; t < w; ++t) precap[static_cast<std::size_t>(t)] = s(t);
      }
      if (cap != T(0)) s = cap * (s / cap).tanh();
      if (alibi)
        for (Eigen::Index t = 0; t < w; ++t) s(t) -= slope * static_cast<T>(std::abs(diag - (lo[r] + t)));
      // IEEE per element: a NaN or +inf score makes the row NaN (+inf - +inf in the softmax); a row
      // of -inf scores sees no key; a -inf score is a key of probability exactly 0.
      bool poisoned = false;
      T mx = -inf;
      for (Eigen::Index t = 0; t < w; ++t) {
        if (std::isnan(s(t)) || s(t) == inf) poisoned = true;
        else if (s(t) > mx) {
          mx = s(t);
          top[static_cast<std::size_t>(r)] = lo[r] + t;
        }
      }
      if (poisoned || mx == -inf) {
        state[static_cast<std::size_t>(r)] = poisoned ? kNan : kEmpty;
        S.row(r).setZero();
        continue;
      }
      state[static_cast<std::size_t>(r)] = kLive;
      m[r] = mx;
      s = (s == -inf).select(T(0), (s - m[r]).exp());  // Eigen's vectorised exp clamps -inf to a tiny positive
      l[r] = s.sum();  // from the unrounded probabilities, as FlashAttention kernels do
      if (emulate_ && p_.dtype != DType::f32)
        for (Eigen::Index t = 0; t < w; ++t) s(t) = static_cast<T>(detail::round_inline(p_.dtype, static_cast<double>(s(t))));
      if (sens()) {  // the largest score magnitude among keys of positive probability, plus ln(keys)
        const T qn = Q.row(r).norm();
        T amax = 0;
        for (Eigen::Index t = 0; t < w; ++t) {
          if (s(t) == T(0)) continue;
          const std::int64_t j = lo[r] + t;
          const T dot = std::abs(scale_) * qn * kv.knorm[static_cast<std::size_t>(j)];
          const T bias = std::abs(slope) * static_cast<T>(std::abs(diag - j));
          amax = std::max(amax, cap == T(0) ? dot + bias : capped_magnitude(dot, precap[static_cast<std::size_t>(t)], cap, bias));
        }
        smax[r] = kScoreRoundings * (amax + std::log(static_cast<T>(w)));
        out_.lse_sens[out_.lse_index(p_, b, h, r0 + r)] = static_cast<double>(smax[r]);
      }
      S.row(r).segment(0, a).setZero();
      S.row(r).segment(a + w, len - a - w).setZero();
    }

    std::vector<char> live(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) live[static_cast<std::size_t>(r)] = state[static_cast<std::size_t>(r)] == kLive;
    Mat<T> O, O2;
    // The two products are independent (each the same Eigen call either way): at once past about
    // 0.1 Mflop each, so that a long row's unit (8 rows over thousands of keys) does not wait for both.
    detail::both(sens() && 2.0 * n * static_cast<double>(len) * p_.dv >= 1e5,
                 [&] { times(S, kv.V, kv, L, len, lo, hi, live, O); },
                 [&] {
                   if (sens()) times(S, kv.V2, kv, L, len, lo, hi, live, O2);
                 });

    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (int r = 0; r < n; ++r) {
      if (state[static_cast<std::size_t>(r)] == kEmpty) {
        write_empty(b, h, r0 + r);
        continue;
      }
      const bool poisoned = state[static_cast<std::size_t>(r)] == kNan;
      const T lse = m[r] + std::log(l[r]);  // (once per row: the same value for each of its elements)
      const std::size_t at0 = out_.o_index(p_, b, r0 + r, h, 0);
      for (int x = 0; x < p_.dv; ++x) {
        const std::size_t at = at0 + static_cast<std::size_t>(x);
        const T v = poisoned ? nan : O(r, x) / l[r];
        out_.o[at] = emulate_ ? detail::round_inline(p_.out_dtype, static_cast<double>(v)) : v;
        if (sens()) {
          const T var = poisoned ? nan : O2(r, x) / l[r] - v * v;
          out_.o_sens[at] = smax[r] * std::sqrt(std::max(T(0), var)) + kLseRoundings * std::abs(lse) * std::abs(v);
          if (std::isnan(var)) out_.o_sens[at] = nan;
          out_.o_top[at] = poisoned ? nan : std::abs(kv.V(top[static_cast<std::size_t>(r)], x)) / l[r];
        }
      }
      out_.lse[out_.lse_index(p_, b, h, r0 + r)] = poisoned ? nan : static_cast<double>(lse);
    }
  }

  void write_empty(int b, int h, int r) {
    for (int x = 0; x < p_.dv; ++x) {
      out_.o[out_.o_index(p_, b, r, h, x)] = 0.0;
      if (sens()) out_.o_sens[out_.o_index(p_, b, r, h, x)] = out_.o_top[out_.o_index(p_, b, r, h, x)] = 0.0;
    }
    out_.lse[out_.lse_index(p_, b, h, r)] = -std::numeric_limits<double>::infinity();
  }

  const AttnProblem& p_;
  const AttnInputs& in_;
  const std::vector<int>& qrows_;
  Reference& out_;
  bool emulate_;
  T scale_;
};

Reference compute(const AttnProblem& p, const AttnInputs& in, const std::vector<int>* rows, bool emulate) {
  require_inputs_fit(p, in);
  Reference out;
  std::vector<int> all;
  if (rows && rows->empty()) rows = nullptr;  // an empty list means every row, as in Reference::rows
  if (rows) {
    for (int r : *rows)
      if (r < 0 || r >= p.sq)
        throw UsageError("query row " + std::to_string(r) + " is out of range: rows must be in [0, sq=" +
                         std::to_string(p.sq) + ")");
    out.rows = *rows;
  } else {
    all.resize(static_cast<std::size_t>(p.sq));
    for (int i = 0; i < p.sq; ++i) all[static_cast<std::size_t>(i)] = i;
  }
  const std::vector<int>& qrows = rows ? out.rows : all;
  const std::size_t R = qrows.size();
  out.o.assign(static_cast<std::size_t>(p.batch) * R * p.hq * p.dv, 0.0);
  out.lse.assign(static_cast<std::size_t>(p.batch) * p.hq * R, 0.0);
  if (!emulate) {
    out.o_sens.assign(out.o.size(), 0.0);
    out.o_top.assign(out.o.size(), 0.0);
    out.lse_sens.assign(out.lse.size(), 0.0);
  }
  if (R == 0) return out;
  if (emulate) Engine<float>(p, in, qrows, out, true).run();
  else Engine<double>(p, in, qrows, out, false).run();
  return out;
}

}  // namespace

void require_inputs_fit(const AttnProblem& p, const AttnInputs& in) {
  require_valid(p);
  auto fit = [&](const Tensor& t, const char* name, std::int64_t span) {
    if (t.dtype != p.dtype)
      throw UsageError(std::string(name) + " has dtype " + std::string(dtype_name(t.dtype)) + " but the problem says " +
                       std::string(dtype_name(p.dtype)));
    if (t.size() < span)
      throw UsageError(std::string(name) + " holds " + std::to_string(t.size()) + " elements but the problem's " +
                       "shape and strides need " + std::to_string(span));
  };
  fit(in.q, "Q", p.q_span());
  fit(in.k, "K", p.k_span());
  fit(in.v, "V", p.v_span());
}

Reference reference(const AttnProblem& p, const AttnInputs& in) { return compute(p, in, nullptr, false); }
Reference reference_rows(const AttnProblem& p, const AttnInputs& in, const std::vector<int>& rows) {
  return compute(p, in, &rows, false);
}
Reference emulate_low_precision(const AttnProblem& p, const AttnInputs& in) { return compute(p, in, nullptr, true); }
Reference emulate_low_precision_rows(const AttnProblem& p, const AttnInputs& in, const std::vector<int>& rows) {
  return compute(p, in, &rows, true);
}

}  // namespace flashprobe::oracle
