#include "flashprobe/core/problem.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "flashprobe/core/error.h"

namespace flashprobe {

double AttnProblem::effective_scale() const { return scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(d)); }

void AttnProblem::visible_range(int b, int i, std::int64_t& lo, std::int64_t& hi) const {
  lo = 0;
  hi = std::int64_t{keys(b)} - 1;
  mask::narrow<std::int64_t>(i + diag_offset(b), causal != Causal::none, window_left, window_right, lo, hi);
}

bool AttnProblem::visible(int b, int i, int j) const {
  std::int64_t lo, hi;
  visible_range(b, i, lo, hi);
  return j >= lo && j <= hi;
}

Strides contiguous_strides(TensorLayout l, int seq, int heads, int dim) {
  const std::int64_t s = seq, h = heads, d = dim;
  if (l == TensorLayout::bshd) return {s * h * d, h * d, d, 1};
  return {h * s * d, d, s * d, 1};
}

Strides AttnProblem::q_strides() const { return q.is_zero() ? contiguous_strides(TensorLayout::bshd, sq, hq, d) : q; }
Strides AttnProblem::k_strides() const { return k.is_zero() ? contiguous_strides(TensorLayout::bshd, sk, hkv, d) : k; }
Strides AttnProblem::v_strides() const { return v.is_zero() ? contiguous_strides(TensorLayout::bshd, sk, hkv, dv) : v; }
Strides AttnProblem::o_strides() const { return o.is_zero() ? contiguous_strides(TensorLayout::bshd, sq, hq, dv) : o; }

std::int64_t tensor_span(const Strides& st, int batch, int seq, int heads, int dim) {
  const std::array<std::int64_t, 4> ext{batch, seq, heads, dim};
  const std::array<std::int64_t, 4> str{st.b, st.s, st.h, st.d};
  std::int64_t last = 0;
  for (int i = 0; i < 4; ++i) {
    if (ext[i] <= 0) return 0;
    std::int64_t t;
    if (__builtin_mul_overflow(ext[i] - 1, str[i], &t) || __builtin_add_overflow(last, t, &last)) return -1;
  }
  return last + 1;
}

std::int64_t AttnProblem::q_span() const { return tensor_span(q_strides(), batch, sq, hq, d); }
std::int64_t AttnProblem::k_span() const { return tensor_span(k_strides(), batch, sk, hkv, d); }
std::int64_t AttnProblem::v_span() const { return tensor_span(v_strides(), batch, sk, hkv, dv); }
std::int64_t AttnProblem::o_span() const { return tensor_span(o_strides(), batch, sq, hq, dv); }

AttnProblem& AttnProblem::with_layout(TensorLayout l) {
  q = contiguous_strides(l, sq, hq, d);
  k = contiguous_strides(l, sk, hkv, d);
  v = contiguous_strides(l, sk, hkv, dv);
  o = contiguous_strides(l, sq, hq, dv);
  return *this;
}

std::string_view causal_name(Causal c) {
  switch (c) {
    case Causal::none: return "none";
    case Causal::bottom_right: return "bottom_right";
    case Causal::top_left: return "top_left";
  }
  return "?";
}

std::string AttnProblem::id() const {
  std::ostringstream s;
  s << "b" << batch << "_hq" << hq << "_hkv" << hkv << "_sq" << sq << "_sk" << sk << "_d" << d;
  if (dv != d) s << "_dv" << dv;
  s << "_" << dtype_name(dtype);
  if (out_dtype != dtype) s << "-o" << dtype_name(out_dtype);
  if (causal == Causal::bottom_right) s << "_causal";
  if (causal == Causal::top_left) s << "_causalTL";
  if (kv_offset) s << "_off" << kv_offset;
  if (window_left >= 0 || window_right >= 0) s << "_win" << window_left << "," << window_right;
  if (softcap != 0) s << "_cap" << softcap;
  if (!alibi_slopes.empty()) s << "_alibi";
  if (scale != 0) s << "_scale" << scale;
  if (!seqlens_k.empty()) {
    s << "_lens";
    for (std::size_t i = 0; i < seqlens_k.size(); ++i) s << (i ? "," : "") << seqlens_k[i];
  }
  if (!q.is_zero() || !k.is_zero() || !v.is_zero() || !o.is_zero()) {
    const AttnProblem bhsd = AttnProblem(*this).with_layout(TensorLayout::bhsd);
    const bool is_bhsd = q == bhsd.q && k == bhsd.k && v == bhsd.v && o == bhsd.o;
    const AttnProblem bshd = AttnProblem(*this).with_layout(TensorLayout::bshd);
    const bool is_bshd = q == bshd.q && k == bshd.k && v == bshd.v && o == bshd.o;
    if (is_bhsd) s << "_bhsd";
    else if (!is_bshd) s << "_strided";
  }
  return s.str();
}

namespace {

void check_strides(std::vector<ProblemIssue>& out, const std::string& name, const Strides& st, int batch, int seq,
                   int heads, int dim) {
  struct Dim { const char* n; std::int64_t ext, str; };
  std::array<Dim, 4> dims{{{"b", batch, st.b}, {"s", seq, st.s}, {"h", heads, st.h}, {"d", dim, st.d}}};
  for (auto& x : dims) {
    if (x.str < 0 || (x.ext > 1 && x.str == 0)) {
      out.push_back({ProblemIssue::Severity::error, name + ".strides." + x.n,
                     name + " stride " + x.n + "=" + std::to_string(x.str) +
                         " is not allowed: strides must be positive for dimensions of extent > 1"});
      return;
    }
  }
  if (tensor_span(st, batch, seq, heads, dim) < 0) {
    out.push_back({ProblemIssue::Severity::error, name + ".strides",
                   name + " strides overflow a 64-bit element offset"});
    return;
  }
  // No aliasing: ordered by stride, each dimension must step past everything the smaller ones span.
  std::sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.str < b.str; });
  std::int64_t covered = 1;  // elements spanned by the dimensions seen so far
  for (auto& x : dims) {
    if (x.ext <= 1) continue;
    if (x.str < covered) {
      out.push_back({ProblemIssue::Severity::error, name + ".strides." + x.n,
                     name + " stride " + x.n + "=" + std::to_string(x.str) + " makes elements alias: it must be >= " +
                         std::to_string(covered) + " (the span of the dimensions with smaller strides)"});
      return;
    }
    covered = x.str * x.ext;
  }
}

// kv_offset tokens already in the cache and sq new ones: attention spans kv_offset + sq keys in every
// batch element (docs/attention-semantics.md, "Visibility"). A problem that says otherwise contradicts itself.
void kv_cache_span(std::vector<ProblemIssue>& out, const AttnProblem& p) {
  const std::int64_t want = std::int64_t{p.kv_offset} + p.sq;
  const auto bad = [&](const std::string& keys) {
    out.push_back({ProblemIssue::Severity::error, "kv_offset",
                   "kv_offset=" + std::to_string(p.kv_offset) + " with sq=" + std::to_string(p.sq) +
                       " means the cache holds kv_offset + sq = " + std::to_string(want) + " keys, but " + keys +
                       ": set sk (and seqlens_k) to kv_offset + sq, or leave kv_offset out (0 = not stated)"});
  };
  if (p.seqlens_k.empty()) {
    if (p.sk != want) bad("sk=" + std::to_string(p.sk));
    return;
  }
  for (std::size_t b = 0; b < p.seqlens_k.size(); ++b)
    if (p.seqlens_k[b] != want) {
      bad("seqlens_k[" + std::to_string(b) + "]=" + std::to_string(p.seqlens_k[b]));
      return;
    }
}

std::string str(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::vector<ProblemIssue> problem_errors(const AttnProblem& p) {
  using S = ProblemIssue::Severity;
  std::vector<ProblemIssue> out;
  auto err = [&](const std::string& f, const std::string& m) { out.push_back({S::error, f, m}); };
  auto positive = [&](const char* f, long long v) {
    if (v < 1) err(f, std::string(f) + "=" + std::to_string(v) + " is not allowed: it must be >= 1");
  };
  positive("batch", p.batch);
  positive("hq", p.hq);
  positive("hkv", p.hkv);
  positive("sq", p.sq);
  positive("d", p.d);
  positive("dv", p.dv);
  if (p.sk < 0) err("sk", "sk=" + std::to_string(p.sk) + " is not allowed: it must be >= 0 (0 gives O = 0, LSE = -inf)");
  if (p.hq >= 1 && p.hkv >= 1 && p.hq % p.hkv != 0)
    err("hq", "hq=" + std::to_string(p.hq) + " is not a multiple of hkv=" + std::to_string(p.hkv) +
                  ": each kv head must serve hq/hkv query heads");
  if (!std::isfinite(p.scale) || p.scale < 0)
    err("scale", "scale=" + str(p.scale) + " is not allowed: use a positive finite number, or 0 for 1/sqrt(d)");
  if (p.kv_offset < 0 || p.kv_offset > p.sk)
    err("kv_offset", "kv_offset=" + std::to_string(p.kv_offset) + " is not allowed: it must be in [0, sk=" +
                         std::to_string(p.sk) + "]");
  else if (p.kv_offset > 0)
    kv_cache_span(out, p);
  if (p.window_left < -1) err("window_left", "window_left=" + std::to_string(p.window_left) + " is not allowed: use >= 0, or -1 for unbounded");
  if (p.window_right < -1) err("window_right", "window_right=" + std::to_string(p.window_right) + " is not allowed: use >= 0, or -1 for unbounded");
  if (!std::isfinite(p.softcap) || p.softcap < 0)
    err("softcap", "softcap=" + str(p.softcap) + " is not allowed: use a positive finite cap, or 0 for none");
  if (!p.alibi_slopes.empty()) {
    if (p.alibi_slopes.size() != static_cast<std::size_t>(std::max(p.hq, 0)))
      err("alibi_slopes", "alibi_slopes has " + std::to_string(p.alibi_slopes.size()) +
                              " entries: it must have one per query head (hq=" + std::to_string(p.hq) + ") or none");
    for (double s : p.alibi_slopes)
      if (!std::isfinite(s)) { err("alibi_slopes", "alibi slope " + str(s) + " is not finite"); break; }
  }
  if (!p.seqlens_k.empty()) {
    if (p.seqlens_k.size() != static_cast<std::size_t>(std::max(p.batch, 0)))
      err("seqlens_k", "seqlens_k has " + std::to_string(p.seqlens_k.size()) +
                           " entries: it must have one per batch element (batch=" + std::to_string(p.batch) + ") or none");
    for (std::size_t b = 0; b < p.seqlens_k.size(); ++b)
      if (p.seqlens_k[b] < 0 || p.seqlens_k[b] > p.sk) {
        err("seqlens_k", "seqlens_k[" + std::to_string(b) + "]=" + std::to_string(p.seqlens_k[b]) +
                             " is not allowed: it must be in [0, sk=" + std::to_string(p.sk) + "]");
        break;
      }
  }
  if (has_errors(out)) return out;  // the checks below need sane sizes

  check_strides(out, "q", p.q_strides(), p.batch, p.sq, p.hq, p.d);
  if (p.sk > 0) {  // with no keys K and V hold no element (their contiguous strides are then 0)
    check_strides(out, "k", p.k_strides(), p.batch, p.sk, p.hkv, p.d);
    check_strides(out, "v", p.v_strides(), p.batch, p.sk, p.hkv, p.dv);
  }
  check_strides(out, "o", p.o_strides(), p.batch, p.sq, p.hq, p.dv);
  return out;
}

std::vector<ProblemIssue> validate(const AttnProblem& p) {
  using S = ProblemIssue::Severity;
  std::vector<ProblemIssue> out = problem_errors(p);
  if (has_errors(out)) return out;
  // Rows that see no key are legal (O = 0, LSE = -inf) but usually not what was meant: report them.
  long long empty = 0;
  std::string first;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i) {
      std::int64_t lo, hi;
      p.visible_range(b, i, lo, hi);
      if (lo > hi && empty++ == 0) first = "batch " + std::to_string(b) + " row " + std::to_string(i);
    }
  if (p.kv_offset > 0 && p.causal == Causal::top_left)
    out.push_back({S::warning, "causal",
                   "causal=top_left with kv_offset=" + std::to_string(p.kv_offset) +
                       ": the new tokens then see only the first keys of the cache, not the cached tokens before "
                       "them (a KV cache is bottom_right)"});
  if (empty)
    out.push_back({S::warning, "mask",
                   std::to_string(empty) + " query row(s) see no key (first: " + first +
                       "); they get O = 0 and LSE = -inf"});
  return out;
}

bool has_errors(const std::vector<ProblemIssue>& issues) {
  return std::any_of(issues.begin(), issues.end(),
                     [](const ProblemIssue& i) { return i.severity == ProblemIssue::Severity::error; });
}

void require_valid(const AttnProblem& p) {
  const auto issues = problem_errors(p);
  if (!has_errors(issues)) return;
  std::string msg = "invalid attention problem:";
  for (auto& i : issues)
    if (i.severity == ProblemIssue::Severity::error) msg += "\n  " + i.field + ": " + i.message;
  throw UsageError(msg);
}

}  // namespace flashprobe
