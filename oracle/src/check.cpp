// check(): the kernel's output against the double reference, judged by the emulated error.
#include "flashprobe/oracle/check.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <random>
#include <set>
#include <sstream>

#include "element_reader.h"
#include "flashprobe/core/error.h"
#include "metrics_internal.h"
#include "parallel.h"
#include "work.h"

namespace flashprobe::oracle {

namespace {

// Every stored element finite (in chunks on the pool's threads: long rows scan megabytes of K and V).
bool all_finite(const Tensor& t) {
  const std::int64_t n = t.size(), per = 1 << 16, chunks = (n + per - 1) / per;
  std::atomic<bool> finite{true};
  const std::uint16_t exp_mask = t.dtype == DType::f16 ? 0x7C00 : 0x7F80;  // all-ones exponent = Inf/NaN
  detail::parallel_for(chunks, detail::threads_for(2.0 * static_cast<double>(n), chunks), [&](std::int64_t c) {
    const std::int64_t last = std::min(n, (c + 1) * per);
    for (std::int64_t i = c * per; i < last; ++i) {
      bool ok;
      if (t.dtype == DType::f32) {
        float v;
        std::memcpy(&v, t.bytes.data() + 4 * i, 4);
        ok = std::isfinite(v);
      } else {
        std::uint16_t h;
        std::memcpy(&h, t.bytes.data() + 2 * i, 2);
        ok = (h & exp_mask) != exp_mask;
      }
      if (!ok) {
        finite = false;
        return;
      }
    }
  });
  return finite.load();
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << v;
  return s.str();
}

// The first NaN among the elements the problem reads (Q everywhere, K and V at keys < keys(b)).
void refuse_nan_inputs(const AttnProblem& p, const AttnInputs& in) {
  // First whether any element read is NaN, on the pool's threads by (b, s) slabs; only then the
  // scan in order that names the first.
  auto any_nan = [&](const Tensor& t, const Strides& st, bool keys, int H, int D) {
    const detail::ElementReader rd(t);
    const int S = keys ? p.sk : p.sq;
    const std::int64_t slabs = std::int64_t{p.batch} * S;
    std::atomic<bool> found{false};
    detail::parallel_for(slabs, detail::threads_for(3.0 * static_cast<double>(slabs) * H * D, slabs), [&](std::int64_t u) {
      const int b = static_cast<int>(u / S), s = static_cast<int>(u % S);
      if (s >= (keys ? p.keys(b) : p.sq) || found.load(std::memory_order_relaxed)) return;
      for (int h = 0; h < H; ++h)
        for (int x = 0; x < D; ++x)
          if (std::isnan(rd(offset(st, b, s, h, x)))) {
            found = true;
            return;
          }
    });
    return found.load();
  };
  if (!any_nan(in.q, p.q_strides(), false, p.hq, p.d) && !any_nan(in.k, p.k_strides(), true, p.hkv, p.d) &&
      !any_nan(in.v, p.v_strides(), true, p.hkv, p.dv))
    return;
  auto scan = [&](const Tensor& t, const Strides& st, const char* name, bool keys, int H, int D) {
    const detail::ElementReader rd(t);
    for (int b = 0; b < p.batch; ++b)
      for (int s = 0; s < (keys ? p.keys(b) : p.sq); ++s)
        for (int h = 0; h < H; ++h)
          for (int x = 0; x < D; ++x)
            if (std::isnan(rd(offset(st, b, s, h, x))))
              throw UsageError(std::string(name) + " holds NaN at [" + std::to_string(b) + ", " + std::to_string(s) +
                               ", " + std::to_string(h) + ", " + std::to_string(x) +
                               "] ([b, s, h, x]); NaN inputs are refused unless allowed (CheckOptions::allow_nan_inputs, "
                               "flashprobe check --allow-nan-inputs), which checks that NaN propagates per IEEE "
                               "(docs/attention-semantics.md)");
  };
  scan(in.q, p.q_strides(), "Q", false, p.hq, p.d);
  scan(in.k, p.k_strides(), "K", true, p.hkv, p.d);
  scan(in.v, p.v_strides(), "V", true, p.hkv, p.dv);
}

}  // namespace

double finite_v_max(const AttnProblem& p, const AttnInputs& in) {
  const detail::ElementReader rv(in.v);
  const Strides vs = p.v_strides();
  // Per batch element, then the largest (a maximum: the same whichever order).
  std::vector<double> best(static_cast<std::size_t>(p.batch), 0.0);
  double elements = 0;
  for (int b = 0; b < p.batch; ++b) elements += static_cast<double>(p.keys(b)) * p.hkv * p.dv;
  detail::parallel_for(p.batch, detail::threads_for(10.0 * elements, p.batch), [&](std::int64_t b) {
    double m = 0;
    for (int j = 0; j < p.keys(static_cast<int>(b)); ++j)
      for (int h = 0; h < p.hkv; ++h)
        for (int x = 0; x < p.dv; ++x) {
          const double v = std::abs(rv(offset(vs, static_cast<int>(b), j, h, x)));
          if (std::isfinite(v)) m = std::max(m, v);
        }
    best[static_cast<std::size_t>(b)] = m;
  });
  return best.empty() ? 0.0 : *std::max_element(best.begin(), best.end());
}

namespace {

std::string where(const AttnProblem& p, const Reference& ref, std::size_t e) {
  const std::size_t x = e % static_cast<std::size_t>(p.dv), h = e / p.dv % static_cast<std::size_t>(p.hq);
  const std::size_t r = e / (static_cast<std::size_t>(p.dv) * p.hq) % static_cast<std::size_t>(ref.num_rows(p));
  const std::size_t b = e / (static_cast<std::size_t>(p.dv) * p.hq * ref.num_rows(p));
  return "b" + std::to_string(b) + " row" + std::to_string(ref.query_row(static_cast<int>(r))) + " h" + std::to_string(h) +
         " x" + std::to_string(x);
}

bool same_class(double a, double b) {  // both finite, both NaN, or the same Inf
  if (std::isfinite(a) || std::isfinite(b)) return std::isfinite(a) && std::isfinite(b);
  return std::isnan(a) ? std::isnan(b) : a == b;
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
  const std::int64_t units = std::int64_t{p.batch} * R;  // (b, r): each writes its own elements
  detail::parallel_for(units, detail::threads_for(20.0 * static_cast<double>(g.o.size()), units), [&](std::int64_t u) {
    const int b = static_cast<int>(u / R), r = static_cast<int>(u % R);
    for (int h = 0; h < p.hq; ++h)
      for (int x = 0; x < p.dv; ++x) g.o[g.o_index(p, b, r, h, x)] = ro(offset(os, b, g.query_row(r), h, x));
  });
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

namespace {
// A GPU kernel's f32 arithmetic is not the emulation's correctly rounded one (approximate exp2 and
// reciprocal, its own summation order): a few f32 ulps of max|O| even where the emulation is exact.
double o_atol_eps(const AttnProblem& p) {
  constexpr double kKernelF32Ulps = 8;
  return std::max({dtype_eps(p.dtype), dtype_eps(p.out_dtype), kKernelF32Ulps * dtype_eps(DType::f32)});
}
}  // namespace

double o_atol_unit(const AttnProblem& p, const Reference& ref, std::size_t e, double ref_max_abs) {
  return o_atol_eps(p) * ref_max_abs + dtype_eps(DType::f32) * ref.o_sens[e];
}
double lse_atol(double lse_ref_max_abs, const CheckOptions& opt) {
  return opt.lse_floor * dtype_eps(DType::f32) * std::max(1.0, lse_ref_max_abs);
}

namespace {

void cannot_bound(Metrics& m, const std::string& what) {
  if (m.cannot_bound++ == 0) m.cannot_bound_detail = what;
}

// Per element of O: bound = k * emulated error + o_floor * o_atol_unit. An element whose reference
// and emulation disagree in class (finite, NaN, +-Inf: an overflow or underflow of the low precision),
// or whose bound is not finite or exceeds every plausible output (max|O_ref| and max|V|), cannot be
// bounded; the check then fails. Fills o_error/o_bound/o_margin (at the worst element), o_bound_max.
// rounded: the reference's O rounded to the output type (rounded_reference).
void judge_o(const AttnProblem& p, const Reference& ref, const std::vector<double>& rounded, const Reference& emu,
             const Reference& got, double v_max, const CheckOptions& opt, CheckResult& res) {
  Metrics& m = res.o_metrics;
  double ref_max = 0;
  for (double v : ref.o)
    if (std::isfinite(v)) ref_max = std::max(ref_max, std::abs(v));
  const double plausible = std::max(ref_max, v_max);
  const double emu_err = res.emulated_metrics.max_abs;
  res.o_margin = 0;
  res.o_bound = res.o_bound_max = res.o_atol = 0;
  // o_atol_unit's terms, hoisted. Chunks of elements on the pool's threads; what each finds (the
  // largest bound, the first element of largest margin, the elements it cannot bound and the first
  // reason) is merged in chunk order, so the result is the one pass's.
  const double atol_eps = o_atol_eps(p), o_floor = opt.o_floor, k = opt.k;
  struct Chunk {
    bool have_where = false;
    std::size_t where_e = 0;
    double bound_max = 0, margin = 0, err = 0, bound = 0, atol = 0;
    long long cannot = 0;
    std::string cannot_detail;
  };
  const std::size_t n = ref.o.size(), per_chunk = 2048;
  const std::int64_t chunks = static_cast<std::int64_t>((n + per_chunk - 1) / per_chunk);
  std::vector<Chunk> out(static_cast<std::size_t>(chunks));
  detail::parallel_for(chunks, detail::threads_for(30.0 * static_cast<double>(n), chunks), [&](std::int64_t c) {
    Chunk& q = out[static_cast<std::size_t>(c)];
    auto cannot = [&](const std::string& what) {
      if (q.cannot++ == 0) q.cannot_detail = what;
    };
    const std::size_t last = std::min(n, static_cast<std::size_t>(c + 1) * per_chunk);
    for (std::size_t e = static_cast<std::size_t>(c) * per_chunk; e < last; ++e) {
      const double rv = ref.o[e], rr = rounded[e], ev = emu.o[e];
      if (!same_class(rr, ev)) {
        std::ostringstream s;
        s << "O " << where(p, ref, e) << ": the reference (rounded to " << dtype_name(p.out_dtype) << ") is " << rr
          << " but the low-precision emulation gives " << ev << " (an overflow or underflow of the kernel's precision)";
        cannot(s.str());
        continue;
      }
      if (!std::isfinite(rr)) continue;  // the NaN/Inf pattern must match exactly (compare())
      const double atol = o_floor * (atol_eps * ref_max + dtype_eps(DType::f32) * ref.o_sens[e]);
      const double bound = k * emu_err + atol;
      if (!std::isfinite(bound) || bound > plausible) {
        cannot("O " + where(p, ref, e) + ": the bound " + fmt(bound) + (std::isfinite(bound) ? " exceeds" : " is not finite against") +
               " every plausible output (max|O_ref| " + fmt(ref_max) + ", max|V| " + fmt(v_max) + ")");
        continue;
      }
      q.bound_max = std::max(q.bound_max, bound);
      const double xv = got.o[e];
      if (!std::isfinite(xv)) continue;  // a pattern mismatch (compare())
      const double err = std::abs(xv - rv);
      const double margin = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
      if (margin > q.margin || !q.have_where) {  // (o_where is written once, after the merge)
        q.margin = margin;
        q.err = err;
        q.bound = bound;
        q.atol = atol;
        q.have_where = true;
        q.where_e = e;
      }
    }
  });
  bool have_where = false;
  std::size_t where_e = 0;
  for (const Chunk& q : out) {
    res.o_bound_max = std::max(res.o_bound_max, q.bound_max);
    if (q.have_where && (q.margin > res.o_margin || !have_where)) {
      res.o_margin = q.margin;
      res.o_error = q.err;
      res.o_bound = q.bound;
      res.o_atol = q.atol;
      have_where = true;
      where_e = q.where_e;
    }
    if (q.cannot > 0 && m.cannot_bound == 0) m.cannot_bound_detail = q.cannot_detail;
    m.cannot_bound += q.cannot;
  }
  if (have_where) res.o_where = where(p, ref, where_e);
  // LSE: the same class rule (the emulation's LSE is the yardstick of the LSE bound).
  if (!got.lse.empty())
    for (std::size_t e = 0; e < ref.lse.size(); ++e)
      if (!same_class(ref.lse[e], emu.lse[e])) {
        std::ostringstream s;
        s << "LSE element " << e << ": the reference is " << ref.lse[e] << " but the low-precision emulation gives "
          << emu.lse[e];
        cannot_bound(m, s.str());
      }
}

}  // namespace

namespace {

// The LSE per row where both are finite: |LSE - LSE_ref| <= lse_k * max|LSE_emul - LSE_ref| + atol_r,
// atol_r = lse_atol(max|LSE_ref|) + 2^-23 * lse_sens_r (the fp32 rounding of the row's scores). The
// record keeps the row of largest margin.
void judge_lse(const Reference& ref, const Reference& got, const CheckOptions& opt, CheckResult& res) {
  Metrics& m = res.o_metrics;
  const double common = opt.lse_k * res.emulated_metrics.lse_max_abs + lse_atol(m.lse_ref_max_abs, opt);
  res.lse_margin = res.lse_error = 0;
  res.lse_atol = common - opt.lse_k * res.emulated_metrics.lse_max_abs;
  res.lse_bound = common;
  for (std::size_t e = 0; e < ref.lse.size(); ++e) {
    const double r = ref.lse[e], x = got.lse[e];
    if (!std::isfinite(r) || !std::isfinite(x)) continue;  // the class check of compare() covers these
    const double sens = e < ref.lse_sens.size() ? ref.lse_sens[e] : 0.0;
    const double bound = common + dtype_eps(DType::f32) * sens, err = std::abs(x - r);
    if (!std::isfinite(bound)) {
      cannot_bound(m, "LSE element " + std::to_string(e) + ": the bound " + fmt(bound) + " is not finite");
      continue;
    }
    const double margin = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
    if (margin > res.lse_margin || e == 0) {
      res.lse_margin = margin;
      res.lse_error = err;
      res.lse_bound = bound;
      res.lse_atol = bound - opt.lse_k * res.emulated_metrics.lse_max_abs;
    }
  }
}

// pass and reason from the verdict's numbers.
void decide(CheckResult& res) {
  const AttnProblem& p = res.problem;
  const CheckOptions& opt = res.options;
  const Metrics& m = res.o_metrics;
  std::vector<std::string> why;
  if (!m.nonfinite_pattern_ok) why.push_back("NaN/Inf pattern differs from the reference: " + m.nonfinite_detail);
  if (m.cannot_bound)
    why.push_back("cannot bound " + std::to_string(m.cannot_bound) + " element(s), first " + m.cannot_bound_detail);
  if (!(res.o_margin <= 1.0))
    why.push_back("O error " + fmt(res.o_error) + " at " + res.o_where + " exceeds the bound " + fmt(res.o_bound) + " = " +
                  fmt(opt.k) + " * emulated " + fmt(res.emulated_metrics.max_abs) + " + atol " + fmt(res.o_atol) +
                  " (max_abs " + fmt(m.max_abs) + " at " + m.worst + ")");
  if (res.lse_checked && !(res.lse_margin <= 1.0))
    why.push_back("LSE error " + fmt(res.lse_error) + " exceeds the bound " + fmt(res.lse_bound) + " = " +
                  fmt(opt.lse_k) + " * emulated " + fmt(res.emulated_metrics.lse_max_abs) + " + atol " +
                  fmt(res.lse_atol) + " (max_abs " + fmt(m.lse_max_abs) + ")");
  // Rounding bias (16-bit outputs only: an f32 output's own arithmetic error dwarfs its ulp).
  res.bias_checked = false;
  res.bias_skipped.clear();
  if (p.out_dtype == DType::f32) res.bias_skipped = "f32 output";
  else if (m.bias_elements < opt.bias_min_elements)
    res.bias_skipped = std::to_string(m.bias_elements) + " elements < " + std::to_string(opt.bias_min_elements);
  if (res.bias_skipped.empty()) {
    res.bias_checked = true;
    const Metrics& em = res.emulated_metrics;
    const double common = std::max(opt.bias_row_common_ulp, m.bias_row_common_ulp);
    const double floor = opt.bias_floor_ulp + (m.bias_rows < opt.bias_min_rows ? common : 0.0);
    res.bias_limit = floor + opt.k * std::abs(em.bias_ulp) + opt.bias_z * m.bias_ulp_se;
    res.bias_up_limit = floor + opt.k * std::abs(em.bias_up_ulp) + opt.bias_z * m.bias_up_ulp_se;
    auto over = [&](double v, double se, double emu, double limit, const char* way) {
      why.push_back("O is biased by " + fmt(v) + " ulp " + way + " on average over " + std::to_string(m.bias_rows) +
                    " rows (limit " + fmt(limit) + " = " + fmt(opt.bias_floor_ulp) + " + " + fmt(opt.k) + " * emulated " +
                    fmt(emu) + " + " + fmt(opt.bias_z) + " * standard error " + fmt(se) +
                    (m.bias_rows < opt.bias_min_rows ? " + " + fmt(common) + " common row shift for fewer than " +
                                                           std::to_string(opt.bias_min_rows) + " rows"
                                                     : std::string()) + ")");
    };
    if (std::abs(m.bias_ulp) > res.bias_limit)
      over(m.bias_ulp, m.bias_ulp_se, em.bias_ulp, res.bias_limit,
           m.bias_ulp < 0 ? "toward zero (rounding by truncation?)" : "away from zero");
    if (std::abs(m.bias_up_ulp) > res.bias_up_limit)
      over(m.bias_up_ulp, m.bias_up_ulp_se, em.bias_up_ulp, res.bias_up_limit, m.bias_up_ulp > 0 ? "toward +inf" : "toward -inf");
  }
  res.pass = why.empty();
  res.reason.clear();
  for (std::size_t i = 0; i < why.size(); ++i) res.reason += (i ? "; " : "") + why[i];
}

}  // namespace

CheckResult judge(const AttnProblem& p, const Reference& ref, const Reference& emu, const Reference& got, double v_max,
                  const CheckOptions& opt) {
  CheckResult res;
  res.problem = p;
  res.case_id = p.id();
  res.options = opt;
  const std::vector<double> rounded = rounded_reference(p, ref);
  // The two comparisons are independent: at once on two threads past a few tens of microseconds.
  detail::both(ref.o.size() >= 4096, [&] { res.o_metrics = compare_rounded(p, ref, rounded, got); },
               [&] { res.emulated_metrics = compare_rounded(p, ref, rounded, emu); });
  res.rows_total = res.rows_checked = ref.num_rows(p);
  judge_o(p, ref, rounded, emu, got, v_max, opt, res);
  res.lse_checked = !got.lse.empty();
  if (res.lse_checked) judge_lse(ref, got, opt, res);

  decide(res);
  return res;
}

CheckResult check(const AttnProblem& p, const AttnInputs& in, const AttnOutputs& out, const CheckOptions& opt) {
  require_inputs_fit(p, in);
  if (!opt.allow_nan_inputs) refuse_nan_inputs(p, in);
  if (out.o.dtype != p.out_dtype)
    throw UsageError("the kernel's O has dtype " + std::string(dtype_name(out.o.dtype)) + " but the problem's out_dtype is " +
                     std::string(dtype_name(p.out_dtype)));
  if (out.o.size() < p.o_span())
    throw UsageError("the kernel's O holds " + std::to_string(out.o.size()) + " elements but the problem needs " +
                     std::to_string(p.o_span()));
  if (!out.lse.empty() && static_cast<std::int64_t>(out.lse.size()) != p.lse_size())
    throw UsageError("the kernel's LSE holds " + std::to_string(out.lse.size()) + " values but [B, Hq, Sq] is " +
                     std::to_string(p.lse_size()));

  const std::vector<int> rows = rows_to_check(p, in, opt);
  // The reference and the emulation are independent: at once on two threads (each may use more) past
  // about 0.1 ms of work (a pool hand-off costs microseconds).
  const double work = detail::engine_work(p, rows.empty() ? p.sq : static_cast<double>(rows.size()));
  Reference ref, emu;
  detail::both(work >= detail::kBesideWork, [&] { ref = rows.empty() ? reference(p, in) : reference_rows(p, in, rows); },
               [&] { emu = rows.empty() ? emulate_low_precision(p, in) : emulate_low_precision_rows(p, in, rows); });
  Reference got = gather_output(p, out, rows);
  if (!opt.check_lse) got.lse.clear();
  CheckResult res = judge(p, ref, emu, got, finite_v_max(p, in), opt);
  res.rows_total = p.sq;
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
    decide(res);
  }
  return res;
}

std::string CheckResult::summary() const {
  std::ostringstream s;
  s << (pass ? "PASS " : "FAIL ") << case_id << "  O max_abs " << fmt(o_metrics.max_abs) << " bound " << fmt(o_bound)
    << " (margin " << std::fixed << std::setprecision(2) << o_margin << (o_where.empty() ? "" : " at " + o_where) << ")";
  s.unsetf(std::ios::floatfield);
  if (o_metrics.cannot_bound) s << "  cannot bound " << o_metrics.cannot_bound;
  if (lse_checked)
    s << "  LSE max_abs " << fmt(o_metrics.lse_max_abs) << " error " << fmt(lse_error) << " bound " << fmt(lse_bound) << " (margin " << std::fixed
      << std::setprecision(2) << lse_margin << ")";
  s.unsetf(std::ios::floatfield);
  if (bias_checked)
    s << "  bias(ulp) to-zero " << std::showpos << std::fixed << std::setprecision(2) << o_metrics.bias_ulp << " up "
      << o_metrics.bias_up_ulp << std::noshowpos << " (" << o_metrics.bias_rows << " rows)";
  else
    s << "  bias skipped (" << bias_skipped << ")";
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
  j["o"] = {{"error", num(o_error)},         {"bound", num(o_bound)},       {"margin", num(o_margin)},
            {"atol", num(o_atol)},           {"where", o_where},            {"bound_max", num(o_bound_max)},
            {"max_abs", num(o_metrics.max_abs)}, {"cannot_bound", o_metrics.cannot_bound}};
  if (lse_checked)
    j["lse"] = {{"error", num(lse_error)}, {"bound", num(lse_bound)}, {"margin", num(lse_margin)},
                {"atol", num(lse_atol)}, {"max_abs", num(o_metrics.lse_max_abs)}};
  else
    j["lse"] = nullptr;
  if (bias_checked)
    j["bias"] = {{"checked", true},
                 {"toward_zero_ulp", num(o_metrics.bias_ulp)},     {"toward_zero_limit", num(bias_limit)},
                 {"toward_plus_inf_ulp", num(o_metrics.bias_up_ulp)}, {"toward_plus_inf_limit", num(bias_up_limit)},
                 {"rows", o_metrics.bias_rows}, {"row_common_ulp", num(o_metrics.bias_row_common_ulp)}};
  else
    j["bias"] = {{"checked", false}, {"skipped", bias_skipped}};
  j["rows_checked"] = rows_checked;
  j["rows_total"] = rows_total;
  j["tolerance"] = {{"k", options.k}, {"o_floor", options.o_floor}, {"lse_k", options.lse_k},
                    {"lse_floor", options.lse_floor}, {"max_rows", options.max_rows}, {"seed", options.seed},
                    {"allow_nan_inputs", options.allow_nan_inputs}, {"bias_floor_ulp", options.bias_floor_ulp},
                    {"bias_z", options.bias_z}, {"bias_min_rows", options.bias_min_rows},
                    {"bias_row_common_ulp", options.bias_row_common_ulp},
                    {"bias_min_elements", options.bias_min_elements}};
  return j;
}

}  // namespace flashprobe::oracle
