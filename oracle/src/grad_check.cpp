// check_backward(): a backward kernel's gradients against the exact ones, judged by the emulated
// FA2 backward's error (BACKWARD_TOLERANCE.md).
#include "flashprobe/oracle/grad_check.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "element_reader.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/half.h"
#include "flashprobe/oracle/check.h"

namespace flashprobe::oracle {

namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << v;
  return s.str();
}

nlohmann::json num(double v) {  // JSON has no Inf/NaN
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

struct Shape {
  int seq, heads, dim;
  Strides st;
};
Shape shape_of(const AttnProblem& p, Grad g) {
  switch (g) {
    case Grad::dq: return {p.sq, p.hq, p.d, p.q_strides()};
    case Grad::dk: return {p.sk, p.hkv, p.d, p.k_strides()};
    case Grad::dv: return {p.sk, p.hkv, p.dv, p.v_strides()};
  }
  return {};
}
const std::vector<double>& of(const Gradients& g, Grad w) { return w == Grad::dq ? g.dq : w == Grad::dk ? g.dk : g.dv; }

// Finite-ness of every element of the problem's shape in a tensor read at strides st.
bool finite_tensor(const Tensor& t, int B, int S, int H, int D, const Strides& st) {
  const detail::ElementReader rd(t);
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < H; ++h)
        for (int x = 0; x < D; ++x)
          if (!std::isfinite(rd(offset(st, b, s, h, x)))) return false;
  return true;
}

std::string where(const AttnProblem& p, Grad g, std::size_t i) {
  const Shape s = shape_of(p, g);
  const std::size_t x = i % s.dim, h = i / s.dim % s.heads, t = i / s.dim / s.heads % s.seq, b = i / s.dim / s.heads / s.seq;
  return "b" + std::to_string(b) + (g == Grad::dq ? " row" : " key") + std::to_string(t) + " h" + std::to_string(h) + " x" +
         std::to_string(x);
}

GradMetrics measure(const AttnProblem& p, Grad g, const std::vector<double>& ref, const std::vector<double>& x) {
  GradMetrics m;
  double se2 = 0, sr2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double rv = ref[i], xv = x[i], rr = round_to(p.dtype, rv);
    if (std::isnan(xv)) ++m.nan_count;
    else if (std::isinf(xv)) ++m.inf_count;
    if (!std::isfinite(xv) || !std::isfinite(rr)) {
      const bool same = std::isnan(xv) || std::isnan(rr) ? (std::isnan(xv) && std::isnan(rr)) : xv == rr;
      if (!same && m.nonfinite_pattern_ok) {
        m.nonfinite_pattern_ok = false;
        m.nonfinite_detail = std::string(grad_name(g)) + " " + where(p, g, i) + " is " + fmt(xv) +
                             " where the reference (rounded to " + std::string(dtype_name(p.dtype)) + ") is " + fmt(rr);
      }
      continue;
    }
    const double e = std::abs(xv - rv);
    if (m.worst.empty() || e > m.max_abs) {
      m.max_abs = e;
      m.worst = where(p, g, i);
    }
    m.ref_max_abs = std::max(m.ref_max_abs, std::abs(rv));
    se2 += e * e;
    sr2 += rv * rv;
    ++m.compared;
  }
  m.nmse = sr2 > 0 ? se2 / sr2 : (se2 > 0 ? INFINITY : 0.0);
  // Rounding bias where |ref| >= rms / 2 (near zero, unbiased noise inflates |x|; see check.h), and
  // only where ref is a normal number of the gradient's type (ulp(ref) a real ulp of it): below the
  // smallest normal, ulp(ref) stops shrinking with ref, and an exact gradient that underflows (~1e-305
  // at logits of order 1e5) would count the kernel's absolute error in subnormal steps (1e34 ulps).
  const double rms = m.compared ? std::sqrt(sr2 / static_cast<double>(m.compared)) : 0;
  const double min_normal = smallest_normal(p.dtype);
  double sum = 0, sum2 = 0, scale_sum = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double rv = ref[i], xv = x[i];
    if (!std::isfinite(xv) || !std::isfinite(rv) || std::abs(rv) < 0.5 * rms || std::abs(rv) < min_normal ||
        !std::isfinite(round_to(p.dtype, rv)))
      continue;
    const double u = (xv - rv) * (rv > 0 ? 1.0 : -1.0) / ulp(p.dtype, std::abs(rv));
    sum += u;
    sum2 += u * u;
    scale_sum += std::abs(rv) / ulp(p.dtype, std::abs(rv));
    ++m.bias_count;
  }
  if (m.bias_count > 0) {
    const double n = static_cast<double>(m.bias_count);
    m.bias_ulp = sum / n;
    m.bias_rel_ulp = scale_sum / n;
    m.bias_se = m.bias_count > 1 ? std::sqrt(std::max(0.0, (sum2 - n * m.bias_ulp * m.bias_ulp) / (n - 1)) / n) : 0;
  }
  return m;
}

}  // namespace

static BackwardCheckResult check_impl(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw,
                                      const KernelGradients& got, const BackwardOracle* oracle, const GradCheckOptions& opt);

std::string_view grad_name(Grad g) { return g == Grad::dq ? "dQ" : g == Grad::dk ? "dK" : "dV"; }

double grad_atol_unit(const AttnProblem& p, Grad g, const GradTerms& t, double ref_max_abs) {
  const double eps = dtype_eps(p.dtype), u = dtype_eps(DType::f32), scale = p.effective_scale();
  switch (g) {
    case Grad::dq: return eps * ref_max_abs + u * (t.s_max * t.dq_terms + (1 + t.s_max) * scale * t.k_max * t.e_d);
    case Grad::dk:
      return eps * ref_max_abs + u * (t.s_max * t.dk_terms + (1 + t.s_max) * scale * t.q_max * t.p_colsum * t.e_d);
    case Grad::dv: return eps * ref_max_abs + u * t.s_max * t.dv_terms;
  }
  return 0;
}

double grad_score_bias_ulp(const GradTerms& t, double rel_ulp) { return dtype_eps(DType::f32) * t.s_max * rel_ulp; }

double grad_plausible(Grad g, const GradTerms& t) {
  return g == Grad::dq ? t.dq_plausible : g == Grad::dk ? t.dk_plausible : t.dv_terms;
}

double grad_mean_terms(Grad g, const GradTerms& t) { return g == Grad::dq ? t.dq_mean_terms : t.dk_mean_terms; }

std::vector<double> gather_gradient(const AttnProblem& p, Grad g, const Tensor& t) {
  const Shape s = shape_of(p, g);
  const detail::ElementReader rd(t);
  std::vector<double> out(static_cast<std::size_t>(p.batch) * s.seq * s.heads * s.dim);
  std::size_t i = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int q = 0; q < s.seq; ++q)
      for (int h = 0; h < s.heads; ++h)
        for (int x = 0; x < s.dim; ++x) out[i++] = rd(offset(s.st, b, q, h, x));
  return out;
}

BackwardOracle backward_oracle(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw) {
  return {reference_backward(p, in, bw.dout), emulate_backward(p, in, bw)};
}

BackwardCheckResult check_backward(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw,
                                   const KernelGradients& got, const GradCheckOptions& opt) {
  return check_impl(p, in, bw, got, nullptr, opt);
}

BackwardCheckResult check_backward(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw,
                                   const KernelGradients& got, const BackwardOracle& oracle, const GradCheckOptions& opt) {
  return check_impl(p, in, bw, got, &oracle, opt);
}

static BackwardCheckResult check_impl(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw,
                                      const KernelGradients& got, const BackwardOracle* oracle, const GradCheckOptions& opt) {
  require_inputs_fit(p, in);
  require_backward_inputs_fit(p, bw);
  const Tensor* given[3] = {&got.dq, &got.dk, &got.dv};
  const std::int64_t spans[3] = {p.q_span(), p.k_span(), p.v_span()};
  bool any = false;
  for (int w = 0; w < 3; ++w) {
    if (given[w]->bytes.empty()) continue;
    any = true;
    const std::string name(grad_name(static_cast<Grad>(w)));
    if (given[w]->dtype != p.dtype)
      throw UsageError("the kernel's " + name + " has dtype " + std::string(dtype_name(given[w]->dtype)) +
                       " but gradients have the problem's dtype " + std::string(dtype_name(p.dtype)));
    if (given[w]->size() < spans[w])
      throw UsageError("the kernel's " + name + " holds " + std::to_string(given[w]->size()) +
                       " elements but the problem's shape and strides need " + std::to_string(spans[w]));
  }
  if (!any) throw UsageError("check_backward needs at least one of dQ, dK, dV");

  BackwardCheckResult res;
  res.failed = false;
  res.problem = p;
  res.case_id = p.id();
  res.options = opt;
  std::vector<std::string> why;
  const bool inputs_finite = finite_tensor(in.q, p.batch, p.sq, p.hq, p.d, p.q_strides()) &&
                             finite_tensor(in.k, p.batch, p.sk, p.hkv, p.d, p.k_strides()) &&
                             finite_tensor(in.v, p.batch, p.sk, p.hkv, p.dv, p.v_strides()) &&
                             finite_tensor(bw.dout, p.batch, p.sq, p.hq, p.dv, p.o_strides());
  if (!inputs_finite) {
    res.reason = "Q, K, V or dO holds NaN/Inf: the gradients cannot be bounded";
    res.failed = true;
    for (int w = 0; w < 3; ++w)
      if (!given[w]->bytes.empty()) {
        GradVerdict& v = w == 0 ? res.dq : w == 1 ? res.dk : res.dv;
        v.checked = true;
        v.pass = false;
        v.reason = res.reason;
      }
    return res;
  }
  BackwardOracle own;
  if (!oracle) own = backward_oracle(p, in, bw);
  const Gradients& ref = oracle ? oracle->ref : own.ref;
  const Gradients& emu = oracle ? oracle->emulated : own.emulated;
  std::vector<std::string> unbounded;
  for (int w = 0; w < 3; ++w) {
    if (given[w]->bytes.empty()) continue;
    const Grad g = static_cast<Grad>(w);
    const std::string name(grad_name(g));
    GradVerdict& v = w == 0 ? res.dq : w == 1 ? res.dk : res.dv;
    v.checked = true;
    v.got = measure(p, g, of(ref, g), gather_gradient(p, g, *given[w]));
    v.emulated = measure(p, g, of(ref, g), of(emu, g));
    v.unit = grad_atol_unit(p, g, ref.terms, v.got.ref_max_abs);
    v.atol = opt.floor * v.unit;
    v.bound = opt.k * v.emulated.max_abs + v.atol;
    v.margin = v.bound > 0 ? v.got.max_abs / v.bound : (v.got.max_abs > 0 ? INFINITY : 0.0);
    v.mean_terms = grad_mean_terms(g, ref.terms);
    v.plausible = grad_plausible(g, ref.terms);
    v.bounded = std::isfinite(v.bound) && v.bound <= v.plausible;
    if (!v.bounded)
      unbounded.push_back("cannot bound " + name + ": its bound " + fmt(v.bound) + " admits every plausible " + name +
                          " (" + fmt(v.plausible) + ", the largest any signs of its terms give); the fp32 scores (up to " +
                          fmt(ref.terms.s_max) + ") leave P uncertain by " + fmt(dtype_eps(DType::f32) * ref.terms.s_max));
    std::vector<std::string> bad;
    if (!v.emulated.nonfinite_pattern_ok)
      bad.push_back("the emulated backward is not finite where the reference is (" + v.emulated.nonfinite_detail +
                    "): the given O or LSE cannot bound the gradients");
    if (!v.got.nonfinite_pattern_ok) bad.push_back("NaN/Inf pattern differs from the reference: " + v.got.nonfinite_detail);
    if (!(v.margin <= 1.0))
      bad.push_back(name + " max_abs " + fmt(v.got.max_abs) + " at " + v.got.worst + " exceeds the bound " + fmt(v.bound) +
                    " = " + fmt(opt.k) + " * emulated " + fmt(v.emulated.max_abs) + " + atol " + fmt(v.atol));
    v.bias_tested = p.dtype != DType::f32 && v.got.bias_count >= opt.bias_min_elements && v.mean_terms >= opt.bias_min_terms;
    if (v.bias_tested) {
      v.bias_score_ulp = grad_score_bias_ulp(ref.terms, v.got.bias_rel_ulp);
      v.bias_limit =
          opt.bias_floor_ulp + opt.k * std::abs(v.emulated.bias_ulp) + v.bias_score_ulp + opt.bias_se * v.got.bias_se;
      if (std::abs(v.got.bias_ulp) > v.bias_limit)
        bad.push_back(name + " is biased by " + fmt(v.got.bias_ulp) + " ulp on average over " +
                      std::to_string(v.got.bias_count) + " elements (limit " + fmt(v.bias_limit) + "): rounding toward zero?");
    }
    for (std::size_t i = 0; i < bad.size(); ++i) v.reason += (i ? "; " : "") + bad[i];
    if (!bad.empty()) why.push_back(v.reason);
    if (!v.bounded) v.reason += (v.reason.empty() ? "" : "; ") + unbounded.back();
    v.pass = bad.empty() && v.bounded;
  }
  res.failed = !why.empty();
  res.bounded = unbounded.empty();
  res.pass = !res.failed && res.bounded;
  why.insert(why.end(), unbounded.begin(), unbounded.end());
  for (std::size_t i = 0; i < why.size(); ++i) res.reason += (i ? "; " : "") + why[i];
  return res;
}

std::string BackwardCheckResult::summary() const {
  std::ostringstream s;
  s << "backward " << (pass ? "PASS " : failed ? "FAIL " : "NOT BOUNDED ") << case_id;
  for (Grad g : {Grad::dq, Grad::dk, Grad::dv}) {
    const GradVerdict& v = verdict(g);
    if (!v.checked) continue;
    s << "  " << grad_name(g) << " max_abs " << fmt(v.got.max_abs) << " bound " << fmt(v.bound) << " (margin " << std::fixed
      << std::setprecision(2) << v.margin << (v.bounded ? ")" : ", not bounded)");
    s.unsetf(std::ios::floatfield);
  }
  if (!pass) s << "  -- " << reason;
  return s.str();
}

nlohmann::json BackwardCheckResult::to_json() const {
  nlohmann::json j;
  j["case_id"] = case_id;
  j["pass"] = pass;
  j["failed"] = failed;
  j["bounded"] = bounded;
  j["reason"] = reason;
  for (Grad g : {Grad::dq, Grad::dk, Grad::dv}) {
    const GradVerdict& v = verdict(g);
    const std::string key = g == Grad::dq ? "dq" : g == Grad::dk ? "dk" : "dv";
    if (!v.checked) {
      j[key] = nullptr;
      continue;
    }
    auto metrics = [](const GradMetrics& m) {
      return nlohmann::json{{"max_abs", num(m.max_abs)},   {"ref_max_abs", num(m.ref_max_abs)}, {"nmse", num(m.nmse)},
                            {"bias_ulp", num(m.bias_ulp)}, {"bias_se", num(m.bias_se)},         {"compared", m.compared},
                            {"bias_count", m.bias_count},  {"bias_rel_ulp", num(m.bias_rel_ulp)}, {"nan_count", m.nan_count},          {"inf_count", m.inf_count},
                            {"nonfinite_pattern_ok", m.nonfinite_pattern_ok},                    {"worst", m.worst},
                            {"nonfinite_detail", m.nonfinite_detail}};
    };
    j[key] = {{"pass", v.pass},          {"reason", v.reason},           {"metrics", metrics(v.got)},
              {"emulated_metrics", metrics(v.emulated)},                 {"error", num(v.got.max_abs)},
              {"bound", num(v.bound)},   {"margin", num(v.margin)},      {"atol", num(v.atol)},
              {"unit", num(v.unit)},     {"mean_terms", v.mean_terms},   {"bias_tested", v.bias_tested},
              {"bias_limit", num(v.bias_limit)}, {"bias_score_ulp", num(v.bias_score_ulp)},
              {"plausible", num(v.plausible)}, {"bounded", v.bounded}};
  }
  j["tolerance"] = {{"k", options.k},           {"floor", options.floor},
                    {"bias_floor_ulp", options.bias_floor_ulp}, {"bias_se", options.bias_se},
                    {"bias_min_elements", options.bias_min_elements}, {"bias_min_terms", options.bias_min_terms}};
  return j;
}

}  // namespace flashprobe::oracle
