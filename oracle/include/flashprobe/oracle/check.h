#pragma once
// Checking a kernel's output against the oracle, with the tolerance model of oracle/TOLERANCE.md.
//
// The idea (the FlashAttention test suite's): a correct fp16/bf16 kernel is not exact, so "close to
// the double reference" needs a yardstick. The yardstick is the error of the low-precision emulation
// (reference.h) on the same inputs: every element e of O with a finite reference passes when
//     |O_kernel - O_ref|_e <= k * max|O_emulated - O_ref| + atol_e,
//     atol_e = o_floor * (max(eps(dtype), eps(out_dtype), 8 * 2^-23) * max|O_ref| + 2^-23 * sens_e)
// where sens_e (Reference::o_sens) is how far O_e moves per unit of relative score error, from the
// finite contributions of its row: the fp32 rounding of the scores carried into O (it matters for
// f32 inputs; it is small where the softmax is sharp). LSE, when given, passes when per row r
//     |LSE_kernel - LSE_ref|_r <= lse_k * max|LSE_emulated - LSE_ref| + lse_floor * 2^-23 * max(1, max|LSE_ref|)
//                                 + 2^-23 * lse_sens_r   (Reference::lse_sens: the row's score rounding)
// over rows with a finite LSE. The defaults were measured (bench/calibrate_tolerance.cpp): see
// TOLERANCE.md for the false-failure rate and the kill rate of planted bugs.
// NaN/Inf (docs/attention-semantics.md): where the reference (rounded to the output type) is NaN or
// Inf the kernel must give the same; a NaN or Inf where the reference is finite fails; a row that
// sees no key must have LSE = -inf. An element that cannot be bounded (the emulation overflows or
// underflows where the reference does not; a bound that is not finite or admits any plausible
// output) makes the check fail. Inputs holding NaN are refused unless allow_nan_inputs.
//
// Example:
//   AttnOutputs out = run_my_kernel(p, in);          // O in p.out_dtype at p.o_strides(), LSE f32
//   CheckResult r = check(p, in, out);
//   std::cout << r.summary() << "\n";                 // PASS b1_hq8_... O 1.2e-03 <= 2.9e-03 (margin 0.41) ...
//   if (!r.pass) std::cerr << r.reason << "\n";
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/oracle/reference.h"

namespace flashprobe::oracle {

struct CheckOptions {
  // Tolerance (TOLERANCE.md derives and measures these).
  double k = 2.0;           // times the emulated error, as in the FlashAttention tests
  double o_floor = 0.5;     // atol in units of o_atol_unit() (see above)
  double lse_k = 2.0;       // times the emulated LSE error
  double lse_floor = 64.0;  // LSE atol in units of 2^-23 * max(1, max|LSE_ref|)
  // Rounding bias of 16-bit outputs (Metrics::bias_ulp toward zero and bias_up_ulp toward +inf, the
  // query row as the unit): each must stay within bias_floor_ulp + k * |emulated| + bias_z * its
  // standard error over rows, plus max(bias_row_common_ulp, Metrics::bias_row_common_ulp) when fewer
  // than bias_min_rows rows count (a correct kernel may shift a whole row: by one rounding of its top
  // key's P, up to an ulp of O where that key dominates, more where the scores round at large logits;
  // many rows average that out, few do not). Checked once bias_min_elements elements count. Catches outputs rounded toward zero (bf16 by
  // truncation: about -0.5 ulp) or one way (one ulp up: +1 even where V has zero mean) that max-abs
  // bounds cannot.
  double bias_floor_ulp = 0.2;
  double bias_z = 3.0;
  double bias_row_common_ulp = 0.5;  // at least; Metrics::bias_row_common_ulp where larger
  long long bias_min_rows = 8;
  long long bias_min_elements = 64;
  bool check_lse = true;    // compare LSE when the kernel gave one
  // Row sampling: 0 checks every query row. Else up to max_rows rows are drawn (seeded), always
  // including the first and the last row and every row that sees no key; NaN/Inf are still scanned in
  // every row of the output. Inputs holding NaN/Inf turn sampling off.
  int max_rows = 0;
  std::uint64_t seed = 0;
  // Inputs holding NaN (at keys the problem reads) are refused with a UsageError naming the tensor
  // and the position; true checks them under IEEE propagation (docs/attention-semantics.md).
  bool allow_nan_inputs = false;
};

struct Metrics {
  double max_abs = 0;      // max |x - ref| over elements where both are finite
  double max_rel = 0;      // max |x - ref| / max(|ref|, 1e-2 * rms(ref))
  double nmse = 0;         // sum (x - ref)^2 / sum ref^2
  double cosine = 1;       // <x, ref> / (|x| |ref|)
  double max_ulp = 0;      // max |x - ref| in units of the output type's ulp at ref
  // Rounding bias in ulps of the output type, per query row (elements with |ref| >= rms(row) / 2,
  // rows with at least 8 of them), then averaged over rows; *_se: the standard error over rows.
  double bias_ulp = 0;     // toward zero: mean of (x - ref) * sign(ref) / ulp(ref); < 0 rounds toward zero
  double bias_up_ulp = 0;  // signed: mean of (x - ref) / ulp(ref); > 0 rounds toward +inf, < 0 toward -inf
  double bias_ulp_se = 0, bias_up_ulp_se = 0;
  // The common shift a correct kernel may give one row, in ulps, mean over the counted rows: per
  // counted element (u_in o_top + 2^-23 o_sens) / ulp(ref), one rounding of the top key's P in the
  // input type plus the fp32 rounding of the scores (Reference::o_top, o_sens), averaged over the row.
  double bias_row_common_ulp = 0;
  long long bias_rows = 0, bias_elements = 0;
  double ref_max_abs = 0;  // max |ref|, the scale of the floor
  double lse_max_abs = 0;  // max |lse - lse_ref| over rows where both are finite
  double lse_ref_max_abs = 0;
  long long compared = 0;       // O elements compared
  long long nan_count = 0;      // NaNs in the O examined (every row, sampled or not)
  long long inf_count = 0;
  long long lse_nan_count = 0;
  long long lse_inf_count = 0;  // -inf for rows that see no key counts here too
  long long cannot_bound = 0;   // O elements no finite, sensible bound exists for (the check fails)
  std::string cannot_bound_detail;  // the first of them and why
  bool nonfinite_pattern_ok = true;
  std::string worst;            // where max_abs occurs: "b0 row12 h3 x5"
  std::string nonfinite_detail; // the first NaN/Inf mismatch, if any
};

struct CheckResult {
  bool pass = false;
  std::string case_id;
  AttnProblem problem;
  Metrics o_metrics;         // the kernel against the double reference (O and LSE)
  Metrics emulated_metrics;  // the low-precision emulation against the double reference
  // O is judged per element (each has its own bound); these describe the element of largest margin.
  double o_error = 0, o_bound = 0, o_margin = 0;  // margin = error / bound (<= 1 passes)
  double o_atol = 0;                              // the floor part of o_bound
  std::string o_where;                            // "b0 row12 h3 x5"
  double o_bound_max = 0;                         // the largest per-element bound
  bool lse_checked = false;
  // The LSE is judged per row (each has its own atol); these describe the row of largest margin.
  double lse_error = 0, lse_bound = 0, lse_margin = 0, lse_atol = 0;
  // The bias criterion: checked, or why not ("f32 output", "2 rows < 8"); its limits when checked.
  bool bias_checked = false;
  std::string bias_skipped;
  double bias_limit = 0, bias_up_limit = 0;
  int rows_checked = 0, rows_total = 0;
  CheckOptions options;
  std::string reason;  // empty when passing; else what failed, with numbers

  std::string summary() const;     // one line, human readable
  nlohmann::json to_json() const;  // the record payload (add record_header("check") around it)
};

// Kernel outputs: out.o in p.out_dtype at p.o_strides(); out.lse [B, Hq, Sq] f32, or empty (not checked).
// Throws UsageError when the inputs or outputs do not fit the problem.
CheckResult check(const AttnProblem& p, const AttnInputs& in, const AttnOutputs& out, const CheckOptions& opt = {});

// check()'s verdict on outputs already gathered at the same rows: ref from reference(), emu from
// emulate_low_precision(), got from gather_output(); v_max = max|V| over the finite values the problem
// reads. The calibration judges many kernels and settings on one problem this way.
CheckResult judge(const AttnProblem& p, const Reference& ref, const Reference& emu, const Reference& got, double v_max,
                  const CheckOptions& opt = {});

// The pieces, for callers with their own flow (the CLI's --ref-o, the calibration):
// max|v| over the finite V elements the problem reads (keys < keys(b)): a bound beyond it and max|O_ref|
// admits any plausible output, so an element with such a bound cannot be bounded.
double finite_v_max(const AttnProblem& p, const AttnInputs& in);
// the kernel's output at the rows of `like` (same layout as a Reference; lse empty if out.lse is).
Reference gather_output(const AttnProblem& p, const AttnOutputs& out, const std::vector<int>& rows);
// Metrics of x against ref (same rows). The NaN/Inf pattern compares x with ref rounded to p.out_dtype.
Metrics compare(const AttnProblem& p, const Reference& ref, const Reference& x);
// The query rows check() examines for these options (empty = all rows).
std::vector<int> rows_to_check(const AttnProblem& p, const AttnInputs& in, const CheckOptions& opt);
// atol of O element e (an index of ref.o) with o_floor = 1:
// eps(coarser type) * max|O_ref| + 2^-23 * ref.o_sens[e] (the fp32 rounding of the scores carried into O).
double o_atol_unit(const AttnProblem& p, const Reference& ref, std::size_t e, double ref_max_abs);
// atol of LSE for a reference of this magnitude (see CheckOptions).
double lse_atol(double lse_ref_max_abs, const CheckOptions& opt);
// The output type's ulp at x (the spacing of representable values around |x|; subnormal spacing near 0).
double ulp(DType t, double x);
// The smallest normal number of t (2^-14 for f16, 2^-126 for bf16 and f32): below it ulp(t, x) is the
// subnormal step and no longer a relative unit of x.
double smallest_normal(DType t);

void to_json(nlohmann::json& j, const Metrics& m);

}  // namespace flashprobe::oracle
