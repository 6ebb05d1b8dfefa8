// Error metrics of one output against the reference: the numbers every check record carries.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "flashprobe/core/half.h"
#include "flashprobe/oracle/check.h"

namespace flashprobe::oracle {

double ulp(DType t, double x) {
  const int mant = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : 23;
  const int emin = t == DType::f16 ? -14 : -126;  // exponent of the smallest normal
  int e = emin;
  if (x != 0 && std::isfinite(x)) e = std::max(std::ilogb(x), emin);
  return std::ldexp(1.0, e - mant);
}

namespace {
// Nonfinite values agree when both are NaN or both are the same Inf.
bool nonfinite_match(double x, double r) {
  if (std::isnan(x) || std::isnan(r)) return std::isnan(x) && std::isnan(r);
  return x == r;
}
}  // namespace

Metrics compare(const AttnProblem& p, const Reference& ref, const Reference& x) {
  Metrics m;
  const int R = ref.num_rows(p);
  double sum_e2 = 0, sum_r2 = 0, sum_x2 = 0, sum_xr = 0, sum_bias = 0;
  long long n_bias = 0;
  std::vector<double> rel_num, rel_den, toward_ref;  // toward_ref: (x - ref) * sign(ref)
  auto note = [&](const std::string& what) {
    m.nonfinite_pattern_ok = false;
    if (m.nonfinite_detail.empty()) m.nonfinite_detail = what;
  };
  for (int b = 0; b < p.batch; ++b)
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < p.hq; ++h)
        for (int d = 0; d < p.dv; ++d) {
          const std::size_t i = ref.o_index(p, b, r, h, d);
          const double rv = ref.o[i], xv = x.o[i];
          const double rr = round_to(p.out_dtype, rv);
          if (std::isnan(xv)) ++m.nan_count;
          else if (std::isinf(xv)) ++m.inf_count;
          if (!std::isfinite(xv) || !std::isfinite(rr)) {
            if (!nonfinite_match(xv, rr)) {
              std::ostringstream s;
              s << "O b" << b << " row" << ref.query_row(r) << " h" << h << " x" << d << " is " << xv
                << " where the reference (rounded to " << dtype_name(p.out_dtype) << ") is " << rr;
              note(s.str());
            }
            continue;
          }
          const double e = std::abs(xv - rv);
          if (m.worst.empty() || e > m.max_abs) {
            m.max_abs = e;
            std::ostringstream s;
            s << "b" << b << " row" << ref.query_row(r) << " h" << h << " x" << d;
            m.worst = s.str();
          }
          m.ref_max_abs = std::max(m.ref_max_abs, std::abs(rv));
          m.max_ulp = std::max(m.max_ulp, e / ulp(p.out_dtype, rv));
          toward_ref.push_back((xv - rv) * (rv > 0 ? 1.0 : -1.0));
          sum_e2 += e * e;
          sum_r2 += rv * rv;
          sum_x2 += xv * xv;
          sum_xr += xv * rv;
          rel_num.push_back(e);
          rel_den.push_back(std::abs(rv));
          ++m.compared;
        }
  const double rms = m.compared ? std::sqrt(sum_r2 / static_cast<double>(m.compared)) : 0;
  for (std::size_t i = 0; i < rel_num.size(); ++i) {
    const double den = std::max(rel_den[i], 1e-2 * rms);
    if (den > 0) m.max_rel = std::max(m.max_rel, rel_num[i] / den);
    else if (rel_num[i] > 0) m.max_rel = INFINITY;
    // Rounding bias, counted only where the reference is at least half the rms: near zero, any
    // unbiased noise inflates |x| (E|r + e| > |r|) by many ulps of the tiny |r|, which would drown
    // the half-ulp shift of rounding toward zero that this metric exists to see.
    if (rel_den[i] >= 0.5 * rms && rel_den[i] > 0) {
      sum_bias += toward_ref[i] / ulp(p.out_dtype, rel_den[i]);
      ++n_bias;
    }
  }
  m.bias_ulp = n_bias ? sum_bias / static_cast<double>(n_bias) : 0.0;
  m.nmse = sum_r2 > 0 ? sum_e2 / sum_r2 : (sum_e2 > 0 ? INFINITY : 0.0);
  m.cosine = (sum_x2 == 0 && sum_r2 == 0) ? 1.0 : (sum_x2 == 0 || sum_r2 == 0) ? 0.0 : sum_xr / std::sqrt(sum_x2 * sum_r2);

  if (!x.lse.empty())
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < p.hq; ++h)
        for (int r = 0; r < R; ++r) {
          const std::size_t i = ref.lse_index(p, b, h, r);
          const double rv = ref.lse[i], xv = x.lse[i];
          if (std::isnan(xv)) ++m.lse_nan_count;
          else if (std::isinf(xv)) ++m.lse_inf_count;
          if (!std::isfinite(xv) || !std::isfinite(rv)) {
            if (!nonfinite_match(xv, rv)) {
              std::ostringstream s;
              s << "LSE b" << b << " h" << h << " row" << ref.query_row(r) << " is " << xv << " where the reference is "
                << rv << (std::isinf(rv) && rv < 0 ? " (the row sees no key)" : "");
              note(s.str());
            }
            continue;
          }
          m.lse_max_abs = std::max(m.lse_max_abs, std::abs(xv - rv));
          m.lse_ref_max_abs = std::max(m.lse_ref_max_abs, std::abs(rv));
        }
  return m;
}

void to_json(nlohmann::json& j, const Metrics& m) {
  auto num = [](double v) -> nlohmann::json {  // JSON has no Inf/NaN: write them as strings
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
  };
  j = nlohmann::json{{"max_abs", num(m.max_abs)},
                     {"max_rel", num(m.max_rel)},
                     {"nmse", num(m.nmse)},
                     {"cosine", num(m.cosine)},
                     {"max_ulp", num(m.max_ulp)},
                     {"bias_ulp", num(m.bias_ulp)},
                     {"ref_max_abs", num(m.ref_max_abs)},
                     {"lse_max_abs", num(m.lse_max_abs)},
                     {"lse_ref_max_abs", num(m.lse_ref_max_abs)},
                     {"compared", m.compared},
                     {"nan_count", m.nan_count},
                     {"inf_count", m.inf_count},
                     {"lse_nan_count", m.lse_nan_count},
                     {"lse_inf_count", m.lse_inf_count},
                     {"nonfinite_pattern_ok", m.nonfinite_pattern_ok},
                     {"worst", m.worst},
                     {"nonfinite_detail", m.nonfinite_detail}};
}

}  // namespace flashprobe::oracle
