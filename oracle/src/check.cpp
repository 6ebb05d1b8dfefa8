// check(): the kernel's output against the double reference, judged by the emulated error.
#include "flashprobe/oracle/check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <random>
#include <set>
#include <sstream>

#include "element_reader.h"
#include "flashprobe/core/error.h"

namespace flashprobe::oracle {

namespace {

bool all_finite(const Tensor& t) {
  const std::int64_t n = t.size();
  if (t.dtype == DType::f32) {
    const auto* f = reinterpret_cast<const float*>(t.bytes.data());
    for (std::int64_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, f + i, 4);
      if (!std::isfinite(v)) return false;
    }
    return true;
  }
  const std::uint16_t exp_mask = t.dtype == DType::f16 ? 0x7C00 : 0x7F80;  // all-ones exponent = Inf/NaN
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint16_t h;
    std::memcpy(&h, t.bytes.data() + 2 * i, 2);
    if ((h & exp_mask) == exp_mask) return false;
  }
  return true;
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << v;
  return s.str();
}

}  // namespace

std::vector<int> rows_to_check(const AttnProblem& p, const AttnInputs& in, const CheckOptions& opt) {
  if (opt.max_rows <= 0 || p.sq <= opt.max_rows) return {};
  if (!all_finite(in.q) || !all_finite(in.k) || !all_finite(in.v)) return {};
  std::set<int> rows{0, p.sq - 1};
  for (int b = 0; b < p.batch; ++b)  // rows that see no key cost nothing and catch 0/0 bugs
    for (int i = 0; i < p.sq; ++i) {
      std::int64_t lo, hi;
      p.visible_range(b, i, lo, hi);
      if (lo > hi) rows.insert(i);
    }
  std::mt19937_64 rng(opt.seed);
  std::uniform_int_distribution<int> pick(0, p.sq - 1);
  const std::size_t want = std::max<std::size_t>(rows.size(), static_cast<std::size_t>(opt.max_rows));
  while (rows.size() < want) rows.insert(pick(rng));
  return {rows.begin(), rows.end()};
}

Reference gather_output(const AttnProblem& p, const AttnOutputs& out, const std::vector<int>& rows) {
  Reference g;
  g.rows = rows;
  const int R = g.num_rows(p);
  const Strides os = p.o_strides();
  const detail::ElementReader ro(out.o);
  g.o.resize(static_cast<std::size_t>(p.batch) * R * p.hq * p.dv);
  for (int b = 0; b < p.batch; ++b)
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) g.o[g.o_index(p, b, r, h, x)] = ro(offset(os, b, g.query_row(r), h, x));
  if (!out.lse.empty()) {
    g.lse.resize(static_cast<std::size_t>(p.batch) * p.hq * R);
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < p.hq; ++h)
        for (int r = 0; r < R; ++r)
          g.lse[g.lse_index(p, b, h, r)] =
              out.lse[(static_cast<std::size_t>(b) * p.hq + h) * p.sq + static_cast<std::size_t>(g.query_row(r))];
  }
  return g;
}

double o_atol_unit(const AttnProblem& p, const AttnInputs& in, double ref_max_abs) {
  // Largest vector norms of Q and K rows, largest |V|: bounds |s| <= scale * |q| * |k|.
  auto max_norm = [](const Tensor& t, const Strides& st, int B, int S, int H, int D) {
    const detail::ElementReader rd(t);
    double best = 0;
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < S; ++s)
        for (int h = 0; h < H; ++h) {
          double n2 = 0;
          for (int x = 0; x < D; ++x) n2 += rd(offset(st, b, s, h, x)) * rd(offset(st, b, s, h, x));
          best = std::max(best, n2);
        }
    return std::sqrt(best);
  };
  const double s_max = p.effective_scale() * max_norm(in.q, p.q_strides(), p.batch, p.sq, p.hq, p.d) *
                       max_norm(in.k, p.k_strides(), p.batch, p.sk, p.hkv, p.d);
  double v_max = 0;
  const detail::ElementReader rv(in.v);
  const Strides vs = p.v_strides();
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.sk; ++j)
      for (int h = 0; h < p.hkv; ++h)
        for (int x = 0; x < p.dv; ++x) v_max = std::max(v_max, std::abs(rv(offset(vs, b, j, h, x))));
  return std::max(dtype_eps(p.dtype), dtype_eps(p.out_dtype)) * ref_max_abs + dtype_eps(DType::f32) * s_max * v_max;
}
double lse_atol(double lse_ref_max_abs, const CheckOptions& opt) {
  return opt.lse_floor * dtype_eps(DType::f32) * std::max(1.0, lse_ref_max_abs);
}

CheckResult check(const AttnProblem& p, const AttnInputs& in, const AttnOutputs& out, const CheckOptions& opt) {
  require_inputs_fit(p, in);
  if (out.o.dtype != p.out_dtype)
    throw UsageError("the kernel's O has dtype " + std::string(dtype_name(out.o.dtype)) + " but the problem's out_dtype is " +
                     std::string(dtype_name(p.out_dtype)));
  if (out.o.size() < p.o_span())
    throw UsageError("the kernel's O holds " + std::to_string(out.o.size()) + " elements but the problem needs " +
                     std::to_string(p.o_span()));
  if (!out.lse.empty() && static_cast<std::int64_t>(out.lse.size()) != p.lse_size())
    throw UsageError("the kernel's LSE holds " + std::to_string(out.lse.size()) + " values but [B, Hq, Sq] is " +
                     std::to_string(p.lse_size()));

  CheckResult res;
  res.problem = p;
  res.case_id = p.id();
  res.options = opt;
  const std::vector<int> rows = rows_to_check(p, in, opt);
  const Reference ref = rows.empty() ? reference(p, in) : reference_rows(p, in, rows);
  const Reference emu = rows.empty() ? emulate_low_precision(p, in) : emulate_low_precision_rows(p, in, rows);
  Reference got = gather_output(p, out, rows);
  if (!opt.check_lse) got.lse.clear();
  res.o_metrics = compare(p, ref, got);
  res.emulated_metrics = compare(p, ref, emu);
  res.rows_total = p.sq;
  res.rows_checked = ref.num_rows(p);

  Metrics& m = res.o_metrics;
  if (!rows.empty()) {
    // Rows not compared are still scanned: with finite inputs their reference is finite (O is a
    // convex combination of V rows; LSE is finite for rows that see a key, and those that see none
    // are all in the sample).
    std::vector<char> sampled(static_cast<std::size_t>(p.sq), 0);
    for (int r : rows) sampled[static_cast<std::size_t>(r)] = 1;
    const Strides os = p.o_strides();
    const detail::ElementReader ro(out.o);
    for (int b = 0; b < p.batch; ++b)
      for (int i = 0; i < p.sq; ++i) {
        if (sampled[static_cast<std::size_t>(i)]) continue;
        for (int h = 0; h < p.hq; ++h) {
          for (int x = 0; x < p.dv; ++x) {
            const double v = ro(offset(os, b, i, h, x));
            if (std::isfinite(v)) continue;
            std::isnan(v) ? ++m.nan_count : ++m.inf_count;
            if (m.nonfinite_detail.empty())
              m.nonfinite_detail = "O b" + std::to_string(b) + " row" + std::to_string(i) + " h" + std::to_string(h) +
                                   " x" + std::to_string(x) + " is " + fmt(v) + " where the reference is finite";
            m.nonfinite_pattern_ok = false;
          }
          if (!got.lse.empty()) {
            const double v = out.lse[(static_cast<std::size_t>(b) * p.hq + h) * p.sq + static_cast<std::size_t>(i)];
            if (std::isfinite(v)) continue;
            std::isnan(v) ? ++m.lse_nan_count : ++m.lse_inf_count;
            if (m.nonfinite_detail.empty())
              m.nonfinite_detail = "LSE b" + std::to_string(b) + " h" + std::to_string(h) + " row" + std::to_string(i) +
                                   " is " + fmt(v) + " where the reference is finite";
            m.nonfinite_pattern_ok = false;
          }
        }
      }
  }

  res.o_atol = opt.o_floor * o_atol_unit(p, in, m.ref_max_abs);
  res.o_bound = opt.k * res.emulated_metrics.max_abs + res.o_atol;
  res.o_margin = res.o_bound > 0 ? m.max_abs / res.o_bound : (m.max_abs > 0 ? INFINITY : 0.0);
  res.lse_checked = !got.lse.empty();
  if (res.lse_checked) {
    res.lse_bound = opt.lse_k * res.emulated_metrics.lse_max_abs + lse_atol(m.lse_ref_max_abs, opt);
    res.lse_margin = res.lse_bound > 0 ? m.lse_max_abs / res.lse_bound : (m.lse_max_abs > 0 ? INFINITY : 0.0);
  }

  std::vector<std::string> why;
  if (!m.nonfinite_pattern_ok) why.push_back("NaN/Inf pattern differs from the reference: " + m.nonfinite_detail);
  if (!(res.o_margin <= 1.0))
    why.push_back("O max_abs " + fmt(m.max_abs) + " at " + m.worst + " exceeds the bound " + fmt(res.o_bound) + " = " +
                  fmt(opt.k) + " * emulated " + fmt(res.emulated_metrics.max_abs) + " + atol " +
                  fmt(res.o_atol));
  if (res.lse_checked && !(res.lse_margin <= 1.0))
    why.push_back("LSE max_abs " + fmt(m.lse_max_abs) + " exceeds the bound " + fmt(res.lse_bound) + " = " +
                  fmt(opt.lse_k) + " * emulated " + fmt(res.emulated_metrics.lse_max_abs) + " + atol " +
                  fmt(lse_atol(m.lse_ref_max_abs, opt)));
  // Rounding bias (16-bit outputs only: an f32 output's own arithmetic error dwarfs its ulp).
  if (p.out_dtype != DType::f32 && m.compared >= opt.bias_min_elements) {
    const double limit = opt.bias_floor_ulp + opt.k * std::abs(res.emulated_metrics.bias_ulp);
    if (std::abs(m.bias_ulp) > limit)
      why.push_back("O is biased by " + fmt(m.bias_ulp) + " ulp on average over " + std::to_string(m.compared) +
                    " elements (limit " + fmt(limit) + " = " + fmt(opt.bias_floor_ulp) + " + " + fmt(opt.k) +
                    " * emulated " + fmt(res.emulated_metrics.bias_ulp) + "): rounding toward zero?");
  }
  res.pass = why.empty();
  for (std::size_t i = 0; i < why.size(); ++i) res.reason += (i ? "; " : "") + why[i];
  return res;
}

std::string CheckResult::summary() const {
  std::ostringstream s;
  s << (pass ? "PASS " : "FAIL ") << case_id << "  O max_abs " << fmt(o_metrics.max_abs) << " bound " << fmt(o_bound)
    << " (margin " << std::fixed << std::setprecision(2) << o_margin << ")";
  s.unsetf(std::ios::floatfield);
  if (lse_checked)
    s << "  LSE max_abs " << fmt(o_metrics.lse_max_abs) << " bound " << fmt(lse_bound) << " (margin " << std::fixed
      << std::setprecision(2) << lse_margin << ")";
  s.unsetf(std::ios::floatfield);
  s << "  nmse " << fmt(o_metrics.nmse) << "  rows " << rows_checked << "/" << rows_total;
  if (o_metrics.nan_count || o_metrics.inf_count) s << "  nan " << o_metrics.nan_count << " inf " << o_metrics.inf_count;
  if (!pass) s << "  -- " << reason;
  return s.str();
}

nlohmann::json CheckResult::to_json() const {
  auto num = [](double v) -> nlohmann::json {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
  };
  nlohmann::json j;
  j["case_id"] = case_id;
  j["pass"] = pass;
  j["reason"] = reason;
  j["problem"] = problem;
  j["metrics"] = o_metrics;
  j["emulated_metrics"] = emulated_metrics;
  j["o"] = {{"error", num(o_metrics.max_abs)}, {"bound", num(o_bound)}, {"margin", num(o_margin)},
            {"atol", num(o_atol)}};
  if (lse_checked)
    j["lse"] = {{"error", num(o_metrics.lse_max_abs)}, {"bound", num(lse_bound)}, {"margin", num(lse_margin)},
                {"atol", num(lse_atol(o_metrics.lse_ref_max_abs, options))}};
  else
    j["lse"] = nullptr;
  j["rows_checked"] = rows_checked;
  j["rows_total"] = rows_total;
  j["tolerance"] = {{"k", options.k}, {"o_floor", options.o_floor}, {"lse_k", options.lse_k},
                    {"lse_floor", options.lse_floor}, {"max_rows", options.max_rows}, {"seed", options.seed}};
  return j;
}

}  // namespace flashprobe::oracle
