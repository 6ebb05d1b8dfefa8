// Error metrics of one output against the reference: the numbers every check record carries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "flashprobe/core/half.h"
#include "flashprobe/oracle/check.h"
#include "metrics_internal.h"
#include "parallel.h"
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

double smallest_normal(DType t) { return ulp(t, 0.0) / dtype_eps(t); }  // the subnormal step times 2^mantissa

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
  struct Row {  // one row's sums (row()), added in row order (add())
    double up = 0, zero = 0, common = 0;
    int n = 0;
  };
  // One row of dv elements read in place: ref, x and the rounded reference (an element counts where x
  // and the rounded reference are finite), o_sens and o_top (null: 0); `finite` of them count, their
  // sum of squares r2 (in element order). u_in: the unit roundoff of P's type.
  static Row row(DType t, double u_in, std::size_t dv, const double* ref, const double* x, const double* rounded,
                 const double* sens_of, const double* top_of, std::size_t finite, double r2) {
    const double rms = finite == 0 ? 0 : std::sqrt(r2 / static_cast<double>(finite));
    double up = 0, zero = 0, common = 0;
    int n = 0;
    for (std::size_t d = 0; d < dv; ++d) {
      const double r = ref[d], xv = x[d];
      if (!std::isfinite(xv) || !std::isfinite(rounded[d])) continue;
      const double sens = sens_of ? sens_of[d] : 0.0, top = top_of ? top_of[d] : 0.0;
      if (r == 0 || std::abs(r) < 0.5 * rms) continue;
      const double inv_unit = inv_ulp(t, r);
      const double e = (xv - r) * inv_unit;
      up += e;
      zero += r > 0 ? e : -e;
      common += (u_in * top + dtype_eps(DType::f32) * sens) * inv_unit;
      ++n;
    }
    return {up, zero, common, n};
  }
  void add(const Row& r) {
    if (r.n < kMinRowElements) return;
    up_.push_back(r.up / r.n);
    zero_.push_back(r.zero / r.n);
    common_ += r.common / r.n;
    elements_ += r.n;
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
  const std::int64_t n = static_cast<std::int64_t>(r.size()), per = 8192, chunks = (n + per - 1) / per;
  detail::parallel_for(chunks, detail::threads_for(20.0 * static_cast<double>(n), chunks), [&](std::int64_t c) {
    for (std::int64_t i = c * per; i < std::min(n, (c + 1) * per); ++i)
      r[static_cast<std::size_t>(i)] = detail::round_inline(p.out_dtype, ref.o[static_cast<std::size_t>(i)]);
  });
  return r;
}

Metrics compare(const AttnProblem& p, const Reference& ref, const Reference& x) {
  return compare_rounded(p, ref, rounded_reference(p, ref), x);
}

Metrics compare_rounded(const AttnProblem& p, const Reference& ref, const std::vector<double>& rounded,
                        const Reference& x) {
  Metrics m;
  const int R = ref.num_rows(p);
  const double u_in = 0.5 * dtype_eps(p.dtype);
  const std::size_t dv = static_cast<std::size_t>(p.dv);
  // The elements in index order are rows (b, r, h) of dv each (Reference::o_index). Chunks of rows are
  // examined on the pool's threads; everything a chunk finds is a maximum, a count, a first occurrence
  // or a per-row sum, merged in chunk order, so the result is the one pass's. The four sums over all
  // elements depend on their order: one chunk adds them as it goes, several leave them to one pass.
  const std::int64_t rows = std::int64_t{p.batch} * R * p.hq;
  std::vector<RowBias::Row> row_stats(static_cast<std::size_t>(rows));
  struct Chunk {
    bool have_worst = false;
    std::size_t worst = 0;  // element index of max_abs (its first occurrence)
    double max_abs = 0, ref_max_abs = 0, max_ulp = 0;
    long long nan_count = 0, inf_count = 0, compared = 0;
    double sum_e2 = 0, sum_r2 = 0, sum_x2 = 0, sum_xr = 0;  // one chunk only
    std::string nonfinite_detail;  // its first pattern mismatch
    bool nonfinite_ok = true;
  };
  const std::int64_t per_chunk = std::max<std::int64_t>(1, 2048 / std::max<std::int64_t>(1, p.dv));
  const std::int64_t chunks = (rows + per_chunk - 1) / per_chunk;
  std::vector<Chunk> out(static_cast<std::size_t>(chunks));
  const bool one = chunks <= 1;
  detail::parallel_for(chunks, detail::threads_for(60.0 * static_cast<double>(ref.o.size()), chunks), [&](std::int64_t c) {
    Chunk& k = out[static_cast<std::size_t>(c)];
    const double* sens_of = ref.o_sens.empty() ? nullptr : ref.o_sens.data();
    const double* top_of = ref.o_top.empty() ? nullptr : ref.o_top.data();
    const std::int64_t last = std::min(rows, (c + 1) * per_chunk);
    for (std::int64_t u = c * per_chunk; u < last; ++u) {
      std::size_t finite = 0;  // the row's elements with x and the rounded reference finite
      double r2 = 0;           // and their sum of squares, for the row's bias (RowBias::row)
      for (std::size_t d = 0; d < dv; ++d) {
        const std::size_t i = static_cast<std::size_t>(u) * dv + d;
        const double rv = ref.o[i], xv = x.o[i];
        const double rr = rounded[i];
        if (std::isnan(xv)) ++k.nan_count;
        else if (std::isinf(xv)) ++k.inf_count;
        if (!std::isfinite(xv) || !std::isfinite(rr)) {
          if (!nonfinite_match(xv, rr)) {
            k.nonfinite_ok = false;
            if (k.nonfinite_detail.empty()) {
              const std::int64_t h = u % p.hq, r = u / p.hq % R, b = u / (std::int64_t{p.hq} * R);
              std::ostringstream s;
              s << "O b" << b << " row" << ref.query_row(static_cast<int>(r)) << " h" << h << " x" << d << " is " << xv
                << " where the reference (rounded to " << dtype_name(p.out_dtype) << ") is " << rr;
              k.nonfinite_detail = s.str();
            }
          }
          continue;
        }
        const double e = std::abs(xv - rv);
        if (!k.have_worst || e > k.max_abs) {
          k.max_abs = e;
          k.have_worst = true;
          k.worst = i;
        }
        k.ref_max_abs = std::max(k.ref_max_abs, std::abs(rv));
        k.max_ulp = std::max(k.max_ulp, e * inv_ulp(p.out_dtype, rv));
        ++finite;
        r2 += rv * rv;
        if (one) {
          k.sum_e2 += e * e;
          k.sum_r2 += rv * rv;
          k.sum_x2 += xv * xv;
          k.sum_xr += xv * rv;
        }
        ++k.compared;
      }
      const std::size_t at = static_cast<std::size_t>(u) * dv;
      row_stats[static_cast<std::size_t>(u)] =
          RowBias::row(p.out_dtype, u_in, dv, ref.o.data() + at, x.o.data() + at, rounded.data() + at,
                       sens_of ? sens_of + at : nullptr, top_of ? top_of + at : nullptr, finite, r2);
    }
  });
  double sum_e2 = 0, sum_r2 = 0, sum_x2 = 0, sum_xr = 0;
  bool have_worst = false;
  std::size_t worst = 0;
  for (const Chunk& k : out) {  // in chunk order: the first occurrence wins ties, as in one pass
    if (k.have_worst && (!have_worst || k.max_abs > m.max_abs)) {
      m.max_abs = k.max_abs;
      worst = k.worst;
      have_worst = true;
    }
    m.ref_max_abs = std::max(m.ref_max_abs, k.ref_max_abs);
    m.max_ulp = std::max(m.max_ulp, k.max_ulp);
    m.nan_count += k.nan_count;
    m.inf_count += k.inf_count;
    m.compared += k.compared;
    if (!k.nonfinite_ok) {
      m.nonfinite_pattern_ok = false;
      if (m.nonfinite_detail.empty()) m.nonfinite_detail = k.nonfinite_detail;
    }
    sum_e2 = k.sum_e2, sum_r2 = k.sum_r2, sum_x2 = k.sum_x2, sum_xr = k.sum_xr;  // (one chunk)
  }
  if (!one) {
    sum_e2 = sum_r2 = sum_x2 = sum_xr = 0;
    for (std::size_t i = 0; i < ref.o.size(); ++i) {
      const double rv = ref.o[i], xv = x.o[i];
      if (!std::isfinite(xv) || !std::isfinite(rounded[i])) continue;
      const double e = std::abs(xv - rv);
      sum_e2 += e * e;
      sum_r2 += rv * rv;
      sum_x2 += xv * xv;
      sum_xr += xv * rv;
    }
  }
  RowBias bias;
  for (const RowBias::Row& r : row_stats) bias.add(r);
  bias.finish(m);
  if (have_worst) {
    const std::size_t u = worst / dv, d = worst % dv;
    const std::size_t h = u % static_cast<std::size_t>(p.hq), r = u / p.hq % static_cast<std::size_t>(R),
                      b = u / (static_cast<std::size_t>(p.hq) * R);
    std::ostringstream s;
    s << "b" << b << " row" << ref.query_row(static_cast<int>(r)) << " h" << h << " x" << d;
    m.worst = s.str();
  }
  // max_rel needs the rms first: a second pass over the elements compared above.
  // (A maximum: chunks on the pool's threads give the one pass's value.)
  const double rms = m.compared ? std::sqrt(sum_r2 / static_cast<double>(m.compared)) : 0;
  std::vector<double> chunk_rel(static_cast<std::size_t>(chunks), m.max_rel);
  detail::parallel_for(chunks, detail::threads_for(5.0 * static_cast<double>(ref.o.size()), chunks), [&](std::int64_t c) {
    double max_rel = m.max_rel;
    const std::size_t last = static_cast<std::size_t>(std::min(rows, (c + 1) * per_chunk)) * dv;
    for (std::size_t i = static_cast<std::size_t>(c * per_chunk) * dv; i < last; ++i) {
      const double rv = ref.o[i], xv = x.o[i];
      if (!std::isfinite(xv) || !std::isfinite(rounded[i])) continue;
      const double e = std::abs(xv - rv), den = std::max(std::abs(rv), 1e-2 * rms);
      if (den > 0) max_rel = std::max(max_rel, e / den);
      else if (e > 0) max_rel = INFINITY;
    }
    chunk_rel[static_cast<std::size_t>(c)] = max_rel;
  });
  for (double v : chunk_rel) m.max_rel = std::max(m.max_rel, v);
  m.nmse = sum_r2 > 0 ? sum_e2 / sum_r2 : (sum_e2 > 0 ? INFINITY : 0.0);
  m.cosine = (sum_x2 == 0 && sum_r2 == 0) ? 1.0 : (sum_x2 == 0 || sum_r2 == 0) ? 0.0 : sum_xr / std::sqrt(sum_x2 * sum_r2);

  auto note = [&](const std::string& what) {
    m.nonfinite_pattern_ok = false;
    if (m.nonfinite_detail.empty()) m.nonfinite_detail = what;
  };
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
