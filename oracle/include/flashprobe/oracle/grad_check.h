#pragma once
// Checking a backward kernel's dQ, dK, dV against the gradient oracle (backward.h), with the
// tolerance model of oracle/BACKWARD_TOLERANCE.md. For each gradient T given:
//     max|T_kernel - T_ref| <= k * max|T_emulated - T_ref| + floor * unit_T
// T_ref exact (reference_backward), T_emulated FlashAttention-2's fp16/bf16 backward run on the O
// and LSE the kernel was given (emulate_backward), unit_T = grad_atol_unit() (BACKWARD_TOLERANCE.md
// derives it from the exact gradients' terms before cancellation). 16-bit gradients also pass a
// rounding-bias test where enough elements with enough terms each are compared. A gradient whose
// bound exceeds every plausible gradient (grad_plausible: the largest |T| any signs of its terms give)
// cannot be bounded (at logits of order 1e5, where the fp32 scores leave P uncertain by percents):
// it does not pass, and the verdict says NOT BOUNDED, not FAIL, unless a check failed too. NaN/Inf: the
// kernel's pattern must match the reference rounded to the input type; Q, K, V or dO holding NaN/Inf
// cannot be bounded and fail; so does an emulation that is not finite where the reference is (an O
// or LSE the bound cannot be built from).
//
// The O and LSE passed in are trusted: a forward error shared by the kernel and the emulation is not
// the backward's. Check the forward itself with check() (the CLI puts both verdicts in one record).
//
// Example:
//   KernelGradients got{dq, dk, dv};   // p.dtype at p.q_strides() / k_strides() / v_strides()
//   BackwardCheckResult r = check_backward(p, in, {dO, O, LSE}, got);
//   std::cout << r.summary() << "\n";  // backward PASS b1_... dQ max_abs ... bound ... dK ... dV ...
#include <string>

#include <nlohmann/json.hpp>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/oracle/backward.h"

namespace flashprobe::oracle {

struct GradCheckOptions {
  double k = 2.0;      // times the emulated error
  double floor = 2.0;  // atol in units of grad_atol_unit()
  double bias_floor_ulp = 0.2;      // the bias limit: bias_floor_ulp + k |emulated bias| + score + bias_se * SE
  double bias_se = 3.0;
  long long bias_min_elements = 256;
  double bias_min_terms = 16;       // grad_mean_terms() below this: no bias test (see BACKWARD_TOLERANCE.md)
};

// The kernel's gradients in p.dtype: dQ at p.q_strides(), dK at p.k_strides(), dV at p.v_strides().
// An empty tensor is not checked; at least one must be given.
struct KernelGradients {
  Tensor dq, dk, dv;
};

enum class Grad { dq, dk, dv };
std::string_view grad_name(Grad g);  // "dQ", "dK", "dV"

struct GradMetrics {
  double max_abs = 0;      // max |x - ref| where both are finite
  double ref_max_abs = 0;
  double nmse = 0;
  double bias_ulp = 0;     // mean (x - ref) sign(ref) / ulp(ref) where |ref| >= rms / 2 and ref is a
                           // normal number of the type (an exact gradient that underflows is left out)
  double bias_se = 0;      // its standard error
  double bias_rel_ulp = 0; // mean |ref| / ulp(ref) over the same elements: ulps per unit of relative error
  long long compared = 0, bias_count = 0, nan_count = 0, inf_count = 0;
  bool nonfinite_pattern_ok = true;
  std::string worst, nonfinite_detail;
};

struct GradVerdict {
  bool checked = false, pass = true;
  GradMetrics got, emulated;
  double unit = 0, atol = 0, bound = 0, margin = 0;
  double plausible = 0;       // grad_plausible(): a bound above it checks nothing
  bool bounded = true;        // bound finite and <= plausible
  double mean_terms = 0;      // grad_mean_terms()
  bool bias_tested = false;
  double bias_score_ulp = 0;  // the part of bias_limit the fp32 scores allow (grad_score_bias_ulp)
  double bias_limit = 0;
  std::string reason;
};

struct BackwardCheckResult {
  bool pass = false;     // every given gradient bounded and nothing failed
  bool failed = false;   // a check failed (bound, bias, NaN/Inf): the kernel is wrong, or its inputs are
  bool bounded = true;   // every given gradient could be bounded (pass = bounded && !failed)
  std::string case_id;
  AttnProblem problem;
  GradVerdict dq, dk, dv;
  GradCheckOptions options;
  std::string reason;  // empty when passing; what failed, then what could not be bounded

  const GradVerdict& verdict(Grad g) const { return g == Grad::dq ? dq : g == Grad::dk ? dk : dv; }
  std::string summary() const;     // one line: "backward PASS|FAIL|NOT BOUNDED <id>  dQ max_abs ... bound ... ..."
  nlohmann::json to_json() const;  // the "backward" object of a check record
};

// Throws UsageError when a tensor does not fit the problem or no gradient is given.
BackwardCheckResult check_backward(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw,
                                   const KernelGradients& got, const GradCheckOptions& opt = {});

// The exact and the emulated gradients of one (p, in, bw), computed once for checking several kernels
// on the same case (the calibration, the property tests).
struct BackwardOracle {
  Gradients ref, emulated;
};
BackwardOracle backward_oracle(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw);
BackwardCheckResult check_backward(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw,
                                   const KernelGradients& got, const BackwardOracle& oracle,
                                   const GradCheckOptions& opt = {});

// unit_T of BACKWARD_TOLERANCE.md from the exact gradients (their terms and max|T_ref|).
double grad_atol_unit(const AttnProblem& p, Grad g, const GradTerms& t, double ref_max_abs);
// The bias (ulps) a correct kernel may show from its fp32 scores alone: P = exp(s - LSE) with s and LSE
// in fp32 is off by a relative error up to u s_max (u = 2^-23), shared by a row and of one sign where
// the rounding of the scale or the LSE makes it so; through P (dV) and dS (dQ, dK) it moves the
// gradients by that relative error: u * s_max * rel_ulp (GradMetrics::bias_rel_ulp). Negligible at
// logits of order 1-100; tens of ulps at logits of order 1e5 (BACKWARD_TOLERANCE.md).
double grad_score_bias_ulp(const GradTerms& t, double rel_ulp);
// The largest |T| any signs of the gradient's terms could give (GradTerms::dq_plausible, dk_plausible;
// dv_terms for dV): a bound at or above it admits every plausible gradient.
double grad_plausible(Grad g, const GradTerms& t);
// Terms summed per element, averaged: visible keys per row (dQ), rows of the group per key (dK, dV).
double grad_mean_terms(Grad g, const GradTerms& t);
// The kernel's gradient as dense BSHD doubles (the layout of Gradients).
std::vector<double> gather_gradient(const AttnProblem& p, Grad g, const Tensor& t);

}  // namespace flashprobe::oracle
