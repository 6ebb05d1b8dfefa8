// Error metrics of one output against the reference: the numbers every check record carries.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "flashprobe/core/half.h"
#include "flashprobe/oracle/check.h"
#include "metrics_internal.h"
#include "round_inline.h"

namespace flashprobe::oracle {

// 2^(max(ilogb(x), emin) - mant), emin for zero, Inf and NaN, read from the double's exponent field
// (ilogb of a double subnormal is below every emin here): the check calls it per element, twice.
double ulp(DType t, double x) {
  const int mant = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : 23;
  const int emin = t == DType::f16 ? -14 : -126;  // exponent of the smallest normal
  std::uint64_t u;
  std::memcpy(&u, &x, 8);
  const int field = static_cast<int>((u >> 52) & 0x7FF);
  const int e = field == 0 || field == 0x7FF ? emin : std::max(field - 1023, emin);
  const std::uint64_t r = static_cast<std::uint64_t>(e - mant + 1023) << 52;  // a normal double: e - mant >= -149
  double v;
  std::memcpy(&v, &r, 8);
  return v;
}

namespace {

// 1 / ulp(t, x), exactly: a power of two between 2^-1016 and 2^149, so y * inv_ulp(t, x) and
// y / ulp(t, x) are the same real number rounded once, the same double, and the product is several
// times cheaper than the division (the comparison's loops divide by an ulp per element).
double inv_ulp(DType t, double x) {
  const int mant = t == DType::f16 ? 10 : t == DType::bf16 ? 7 : 23;
  const int emin = t == DType::f16 ? -14 : -126;
  std::uint64_t u;
  std::memcpy(&u, &x, 8);
  const int field = static_cast<int>((u >> 52) & 0x7FF);
  const int e = field == 0 || field == 0x7FF ? emin : std::max(field - 1023, emin);
  const std::uint64_t r = static_cast<std::uint64_t>(mant - e + 1023) << 52;
  double v;
  std::memcpy(&v, &r, 8);
  return v;
}

// Rounding bias, with the query row (b, i, h) as the unit: a correct kernel may carry a common error
// per row (moved by one rounding of its top key's P, or by its scores' fp32 rounding:
// Metrics::bias_row_common_ulp), so elements of one row are not independent
// and a problem of 2 rows cannot tell such an error from a bias. Per row with at least
// kMinRowElements counted elements (|ref| >= rms(row) / 2: near zero, unbiased noise inflates |x| by
// many ulps of the tiny |ref|), the mean error in ulps of ref, signed (toward +inf) and against
// sign(ref) (toward zero when < 0); the statistics are the means over rows, with their standard errors.
constexpr int kMinRowElements = 8;
class RowBias {
 public:
  // row: (ref, x, o_sens, o_top) of the row's finite elements; u_in: the unit roundoff of P's type.
  void add_row(DType t, double u_in, const std::vector<std::array<double, 4>>& row) {
    double r2 = 0;
    for (const auto& [r, x, sens, top] : row) r2 += r * r;
    const double rms = row.empty() ? 0 : std::sqrt(r2 / static_cast<double>(row.size()));
    double up = 0, zero = 0, common = 0;
    int n = 0;
    for (const auto& [r, x, sens, top] : row) {
      if (r == 0 || std::abs(r) < 0.5 * rms) continue;
      const double inv_unit = inv_ulp(t, r);
      const double e = (x - r) * inv_unit;
      up += e;
      zero += r > 0 ? e : -e;
      common += (u_in * top + dtype_eps(DType::f32) * sens) * inv_unit;
      ++n;
    }
    if (n < kMinRowElements) return;
    up_.push_back(up / n);
    zero_.push_back(zero / n);
    common_ += common / n;
    elements_ += n;
  }
  void finish(Metrics& m) const {
    auto mean_se = [](const std::vector<double>& v, double& mean, double& se) {
      mean = se = 0;
      if (v.empty()) return;
      for (double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      if (v.size() < 2) return;
      double ss = 0;
      for (double x : v) ss += (x - mean) * (x - mean);
      se = std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
    };
    mean_se(zero_, m.bias_ulp, m.bias_ulp_se);
    mean_se(up_, m.bias_up_ulp, m.bias_up_ulp_se);
    m.bias_rows = static_cast<long long>(up_.size());
    m.bias_row_common_ulp = up_.empty() ? 0.0 : common_ / static_cast<double>(up_.size());
    m.bias_elements = elements_;
  }

 private:
  std::vector<double> up_, zero_;
  double common_ = 0;
  long long elements_ = 0;
};

// Nonfinite values agree when both are NaN or both are the same Inf.
bool nonfinite_match(double x, double r) {
  if (std::isnan(x) || std::isnan(r)) return std::isnan(x) && std::isnan(r);
  return x == r;
}
}  // namespace

std::vector<double> rounded_reference(const AttnProblem& p, const Reference& ref) {
  std::vector<double> r(ref.o.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = detail::round_inline(p.out_dtype, ref.o[i]);
  return r;
}

Metrics compare(const AttnProblem& p, const Reference& ref, const Reference& x) {
  return compare_rounded(p, ref, rounded_reference(p, ref), x);
}

Metrics compare_rounded(const AttnProblem& p, const Reference& ref, const std::vector<double>& rounded,
                        const Reference& x) {
  Metrics m;
  const int R = ref.num_rows(p);
  double sum_e2 = 0, sum_r2 = 0, sum_x2 = 0, sum_xr = 0;
  RowBias bias;
  const double u_in = 0.5 * dtype_eps(p.dtype);
  std::vector<std::array<double, 4>> row;  // (ref, x, o_sens, o_top) of the current row, both finite
  bool have_worst = false;
  int worst[4] = {0, 0, 0, 0};  // b, query row, h, x of max_abs
  // The running maxima and counts live in locals (in m, every store through the row vector's
  // push_back could alias them), written to m after the loop.
  double max_abs = m.max_abs, ref_max_abs = m.ref_max_abs, max_ulp = m.max_ulp;
  long long nan_count = 0, inf_count = 0, compared = 0;
  row.reserve(static_cast<std::size_t>(p.dv));
  auto note = [&](const std::string& what) {
    m.nonfinite_pattern_ok = false;
    if (m.nonfinite_detail.empty()) m.nonfinite_detail = what;
  };
  for (int b = 0; b < p.batch; ++b)
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < p.hq; ++h) {
        bias.add_row(p.out_dtype, u_in, row);
        row.clear();
        for (int d = 0; d < p.dv; ++d) {
          const std::size_t i = ref.o_index(p, b, r, h, d);
          const double rv = ref.o[i], xv = x.o[i];
          const double rr = rounded[i];
          if (std::isnan(xv)) ++nan_count;
          else if (std::isinf(xv)) ++inf_count;
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
          if (!have_worst || e > max_abs) {  // (the text is written once, after the loop)
            max_abs = e;
            have_worst = true;
            worst[0] = b, worst[1] = ref.query_row(r), worst[2] = h, worst[3] = d;
          }
          ref_max_abs = std::max(ref_max_abs, std::abs(rv));
          max_ulp = std::max(max_ulp, e * inv_ulp(p.out_dtype, rv));
          row.push_back({rv, xv, ref.o_sens.empty() ? 0.0 : ref.o_sens[i], ref.o_top.empty() ? 0.0 : ref.o_top[i]});
          sum_e2 += e * e;
          sum_r2 += rv * rv;
          sum_x2 += xv * xv;
          sum_xr += xv * rv;
          ++compared;
        }
      }
  m.max_abs = max_abs;
  m.ref_max_abs = ref_max_abs;
  m.max_ulp = max_ulp;
  m.nan_count += nan_count;
  m.inf_count += inf_count;
  m.compared = compared;
  bias.add_row(p.out_dtype, u_in, row);
  bias.finish(m);
  if (have_worst) {
    std::ostringstream s;
    s << "b" << worst[0] << " row" << worst[1] << " h" << worst[2] << " x" << worst[3];
    m.worst = s.str();
  }
  // max_rel needs the rms first: a second pass over the elements compared above.
  const double rms = m.compared ? std::sqrt(sum_r2 / static_cast<double>(m.compared)) : 0;
  double max_rel = m.max_rel;
  for (std::size_t i = 0; i < ref.o.size(); ++i) {
    const double rv = ref.o[i], xv = x.o[i];
    if (!std::isfinite(xv) || !std::isfinite(rounded[i])) continue;
    const double e = std::abs(xv - rv), den = std::max(std::abs(rv), 1e-2 * rms);
    if (den > 0) max_rel = std::max(max_rel, e / den);
    else if (e > 0) max_rel = INFINITY;
  }
  m.max_rel = max_rel;
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
                     {"bias_ulp_se", num(m.bias_ulp_se)},
                     {"bias_up_ulp", num(m.bias_up_ulp)},
                     {"bias_up_ulp_se", num(m.bias_up_ulp_se)},
                     {"bias_rows", m.bias_rows},
                     {"bias_row_common_ulp", num(m.bias_row_common_ulp)},
                     {"bias_elements", m.bias_elements},
                     {"ref_max_abs", num(m.ref_max_abs)},
                     {"lse_max_abs", num(m.lse_max_abs)},
                     {"lse_ref_max_abs", num(m.lse_ref_max_abs)},
                     {"compared", m.compared},
                     {"nan_count", m.nan_count},
                     {"inf_count", m.inf_count},
                     {"lse_nan_count", m.lse_nan_count},
                     {"lse_inf_count", m.lse_inf_count},
                     {"nonfinite_pattern_ok", m.nonfinite_pattern_ok},
                     {"cannot_bound", m.cannot_bound},
                     {"cannot_bound_detail", m.cannot_bound_detail},
                     {"worst", m.worst},
                     {"nonfinite_detail", m.nonfinite_detail}};
}

}  // namespace flashprobe::oracle
