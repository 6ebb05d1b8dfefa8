// Calibrates the gradient tolerance model (oracle/BACKWARD_TOLERANCE.md) from measurements: random
// problems, each run through the correct simulated backward kernels (the false-failure side) and the
// ones with a planted bug (the kill side), all checked with check_backward(). Prints a table and
// writes a record with the false-failure rate and kill rates for a grid of (k, floor) and for the
// defaults. Everything here is simulated (CPU stand-ins), not a GPU kernel.
//
// --inputs normal: Q, K ~ N(0, σ²) with σ in {0.5, 1, 2, 3} (logits up to about 100); --inputs logits:
// the property harness's large_logits inputs (proptests::InputKind::large_logits, scores of order 1e5),
// where dQ and dK are mostly NOT BOUNDED: the record then also counts every run's default verdict
// (pass / not bounded / fail), since the grid and kill tables leave not-bounded runs out.
//
//   calibrate_backward [--problems 600] [--seed 1] [--max-macs 3e5] [--inputs normal|logits] [--out calibration_backward.json]
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "flashprobe/core/record.h"
#include "flashprobe/oracle/grad_check.h"
#include "flashprobe/oracle/reference.h"
#include "flashprobe/oracle/simulated_backward.h"
#include "flashprobe/proptests/cases.h"
#include "calibration_util.h"
#include "problem_sampler.h"

using namespace flashprobe;
using namespace flashprobe::oracle;

namespace {

constexpr Grad kGrads[] = {Grad::dq, Grad::dk, Grad::dv};

struct Sample {
  std::string kernel, case_id, dtype;
  bool correct = true, equivalent = false;
  bool bounded = true;  // every gradient bounded (grad_check.h); a run that is not is left out of every count
  bool failed = false;  // the default verdict: FAIL (a check failed; with bounded, pass = !failed && bounded)
  bool pattern_ok[3] = {true, true, true}, bias_ok[3] = {true, true, true};
  double err[3] = {}, emu[3] = {}, unit[3] = {};
  double reach = 0;  // the largest bound / plausible gradient over dQ, dK, dV (1 and above: not bounded)
  std::string default_reason;
};

bool passes(const Sample& s, double k, double fl) {
  for (int g = 0; g < 3; ++g)
    if (!s.pattern_ok[g] || !s.bias_ok[g] || !(s.err[g] <= k * s.emu[g] + fl * s.unit[g])) return false;
  return true;
}
double margin(const Sample& s, int g, double k, double fl) {
  const double b = k * s.emu[g] + fl * s.unit[g];
  return b > 0 ? s.err[g] / b : (s.err[g] > 0 ? INFINITY : 0.0);
}

std::vector<Sample> run_problem(int index, std::uint64_t seed, double max_macs, bool logits) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(index));
  AttnProblem p = bench::sample_problem(rng, max_macs);
  p.out_dtype = p.dtype;  // a backward reads dO and O in the forward's output type; kept equal here
  InputDist dist;
  const double mags[] = {0.5, 1.0, 1.0, 2.0, 3.0};
  dist.magnitude = mags[std::uniform_int_distribution<int>(0, 4)(rng)];
  if (logits) {  // the harness's large_logits distribution (its definition, not a copy of its numbers)
    proptests::Case c;
    c.problem = p;
    c.inputs = proptests::InputKind::large_logits;
    dist = c.input_dist();
  }
  const AttnInputs in = random_inputs(p, rng(), dist);
  const Reference fwd = emulate_low_precision(p, in);
  BackwardInputs bw{random_normal(p.out_dtype, p.o_span(), rng()), Tensor(p.out_dtype, p.o_span()), {}};
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.sq; ++i)
      for (int h = 0; h < p.hq; ++h)
        for (int x = 0; x < p.dv; ++x) bw.o.set(offset(p.o_strides(), b, i, h, x), fwd.o[fwd.o_index(p, b, i, h, x)]);
  bw.lse.assign(fwd.lse.begin(), fwd.lse.end());
  const BackwardOracle oracle = backward_oracle(p, in, bw);
  // A bug is measured only where it changes the gradients: compared with the kernel it was planted
  // in (the default configuration), bitwise-equal gradients mean "not observable here".
  const KernelGradients base = run_simulated_backward({"base", true, "", SimBwdConfig{}}, p, in, bw);

  std::vector<Sample> out;
  for (const auto& k : simulated_backward_kernels()) {
    const KernelGradients g = run_simulated_backward(k, p, in, bw);
    const BackwardCheckResult r = check_backward(p, in, bw, g, oracle);
    Sample s;
    s.kernel = k.name;
    s.case_id = p.id();
    s.dtype = std::string(dtype_name(p.dtype));
    s.correct = k.correct;
    s.equivalent = !k.correct && g.dq.bytes == base.dq.bytes && g.dk.bytes == base.dk.bytes && g.dv.bytes == base.dv.bytes;
    s.bounded = r.bounded;
    s.failed = r.failed;
    for (int w = 0; w < 3; ++w) {
      const GradVerdict& v = r.verdict(kGrads[w]);
      s.pattern_ok[w] = v.got.nonfinite_pattern_ok && v.emulated.nonfinite_pattern_ok;
      s.bias_ok[w] = !v.bias_tested || std::abs(v.got.bias_ulp) <= v.bias_limit;
      s.err[w] = v.got.max_abs;
      s.emu[w] = v.emulated.max_abs;
      s.unit[w] = v.unit;
      if (v.plausible > 0) s.reach = std::max(s.reach, v.bound / v.plausible);
    }
    if (!r.pass) s.default_reason = r.reason.substr(0, 300);
    out.push_back(s);
  }
  return out;
}


}  // namespace

int main(int argc, char** argv) {
  bench::CalibrationArgs args{600, 1, 3e5, "", {"normal", "logits"}, ""};
  if (const std::string err = bench::parse_calibration_args(argc, argv, args); !err.empty()) {
    std::cerr << "calibrate_backward: " << err << "\n";
    return 2;
  }
  const int problems = args.problems;
  const std::uint64_t seed = args.seed;
  const double max_macs = args.max_macs;
  const std::string out_path = args.out;
  const bool logits = args.inputs == "logits";

  std::vector<Sample> all =
      bench::run_problems<Sample>(problems, [&](int i) { return run_problem(i, seed, max_macs, logits); });
  double reach = 0;
  for (const auto& s : all) reach = std::max(reach, s.reach);

  // Every run's default verdict, not-bounded runs included: a correct kernel's FAIL is a false failure,
  // a planted bug's FAIL a kill; NOT BOUNDED is neither (the bug survives it, unseen).
  nlohmann::json verdicts = nlohmann::json::array();
  std::printf("default verdicts, every run (not-bounded runs included)\n%-28s %7s %6s %6s %12s %6s\n", "kernel",
              "correct", "runs", "pass", "not bounded", "fail");
  for (const auto& k : simulated_backward_kernels()) {
    long long runs = 0, pass = 0, nb = 0, fail = 0;
    for (const auto& s : all) {
      if (s.kernel != k.name || s.equivalent) continue;
      ++runs;
      if (s.failed) ++fail;
      else if (!s.bounded) ++nb;
      else ++pass;
    }
    std::printf("%-28s %7s %6lld %6lld %12lld %6lld\n", k.name.c_str(), k.correct ? "yes" : "no", runs, pass, nb, fail);
    verdicts.push_back({{"name", k.name}, {"correct", k.correct}, {"runs", runs}, {"pass", pass}, {"not_bounded", nb},
                        {"fail", fail}});
  }
  std::printf("\n");
  // A run whose gradients cannot all be bounded neither passes nor fails: counted apart.
  const auto unbounded = std::stable_partition(all.begin(), all.end(), [](const Sample& s) { return s.bounded; });
  const long long not_bounded = all.end() - unbounded;
  all.erase(unbounded, all.end());

  const GradCheckOptions d;
  nlohmann::json rec = record_header("calibration_backward", false);
  rec["evidence"] = "simulated (CPU stand-ins of backward kernels, oracle/simulated_backward.h)";
  rec["config"] = {{"problems", problems}, {"seed", seed}, {"max_macs", max_macs}, {"inputs", args.inputs},
                   {"defaults", {{"k", d.k}, {"floor", d.floor}, {"bias_floor_ulp", d.bias_floor_ulp},
                                 {"bias_se", d.bias_se}, {"bias_min_terms", d.bias_min_terms}}}};

  nlohmann::json grid = nlohmann::json::array();
  for (double k : {1.0, 1.5, 2.0, 3.0})
    for (double fl : {0.0, 0.5, 1.0, 2.0, 4.0, 8.0}) {
      long long ff = 0, nc = 0, killed = 0, nb = 0;
      for (const auto& s : all) {
        if (s.correct) { ++nc; ff += !passes(s, k, fl); }
        else if (!s.equivalent) { ++nb; killed += !passes(s, k, fl); }
      }
      grid.push_back({{"k", k}, {"floor", fl}, {"correct_runs", nc}, {"false_failures", ff}, {"bug_runs", nb},
                      {"killed", killed}, {"kill_rate", nb ? double(killed) / double(nb) : 0.0}});
    }
  rec["grid"] = grid;

  nlohmann::json kernels = nlohmann::json::array();
  std::printf("%-28s %6s %6s %9s %9s %9s %9s\n", "correct kernel", "runs", "fails", "dQ max", "dK max", "dV max",
              "p99 any");
  for (const auto& k : simulated_backward_kernels()) {
    if (!k.correct) continue;
    std::vector<double> m[3], any;
    long long fails = 0;
    std::string worst_case, first_reason;
    double worst = -1;
    for (const auto& s : all) {
      if (s.kernel != k.name) continue;
      double mx = 0;
      for (int g = 0; g < 3; ++g) {
        m[g].push_back(margin(s, g, d.k, d.floor));
        mx = std::max(mx, m[g].back());
      }
      any.push_back(mx);
      const bool fail = !passes(s, d.k, d.floor);
      fails += fail;
      if (fail && first_reason.empty()) first_reason = s.case_id + ": " + s.default_reason;
      if (mx > worst) { worst = mx; worst_case = s.case_id; }
    }
    std::printf("%-28s %6zu %6lld %9.3f %9.3f %9.3f %9.3f\n", k.name.c_str(), any.size(), fails, bench::quantile(m[0], 1.0),
                bench::quantile(m[1], 1.0), bench::quantile(m[2], 1.0), bench::quantile(any, 0.99));
    kernels.push_back({{"name", k.name}, {"what", k.what}, {"runs", any.size()}, {"false_failures", fails},
                       {"dq_margin_max", bench::quantile(m[0], 1.0)}, {"dk_margin_max", bench::quantile(m[1], 1.0)},
                       {"dv_margin_max", bench::quantile(m[2], 1.0)}, {"margin_p50", bench::quantile(any, 0.5)},
                       {"margin_p99", bench::quantile(any, 0.99)}, {"worst_case", worst_case}, {"first_failure", first_reason}});
  }
  rec["correct_kernels"] = kernels;

  nlohmann::json bugs = nlohmann::json::array();
  std::printf("\n%-28s %10s %8s %8s %s\n", "planted bug", "observable", "killed", "rate", "first survivor");
  for (const auto& k : simulated_backward_kernels()) {
    if (k.correct) continue;
    long long obs = 0, killed = 0, equivalent = 0;
    std::map<std::string, std::pair<long long, long long>> by_dtype;
    std::vector<std::string> survivors;
    for (const auto& s : all) {
      if (s.kernel != k.name) continue;
      if (s.equivalent) { ++equivalent; continue; }
      ++obs;
      const bool kill = !passes(s, d.k, d.floor);
      killed += kill;
      by_dtype[s.dtype].first++;
      by_dtype[s.dtype].second += kill;
      if (!kill && survivors.size() < 8) survivors.push_back(s.case_id);
    }
    nlohmann::json bd;
    for (auto& [dt, c] : by_dtype)
      bd[dt] = {{"observable", c.first}, {"killed", c.second}, {"kill_rate", c.first ? double(c.second) / double(c.first) : 0.0}};
    std::printf("%-28s %10lld %8lld %8.3f %s\n", k.name.c_str(), obs, killed, obs ? double(killed) / double(obs) : 0.0,
                survivors.empty() ? "-" : survivors.front().c_str());
    bugs.push_back({{"name", k.name}, {"what", k.what}, {"runs", obs + equivalent}, {"not_observable", equivalent},
                    {"observable", obs}, {"killed", killed}, {"kill_rate", obs ? double(killed) / double(obs) : 0.0},
                    {"by_dtype", bd}, {"survivors", survivors}});
  }
  rec["planted_bugs"] = bugs;

  long long ff = 0, nc = 0;
  nlohmann::json ffc = nlohmann::json::array();
  for (const auto& s : all)
    if (s.correct) {
      ++nc;
      if (!passes(s, d.k, d.floor)) {
        ++ff;
        if (ffc.size() < 40) ffc.push_back({{"kernel", s.kernel}, {"case_id", s.case_id}, {"reason", s.default_reason}});
      }
    }
  rec["false_failure_cases"] = ffc;
  rec["defaults_false_failures"] = ff;
  rec["defaults_correct_runs"] = nc;
  rec["not_bounded_runs"] = not_bounded;
  rec["default_verdicts"] = verdicts;  // per kernel, observable runs only for planted bugs
  rec["bound_over_plausible_max"] = reach;
  std::printf("\ndefaults k=%g floor=%g: %lld false failures in %lld correct runs (simulated); %lld runs not bounded "
              "(largest bound / plausible gradient %.3g)\n", d.k, d.floor, ff, nc, not_bounded, reach);
  if (!out_path.empty()) write_json_file(out_path, rec);
  return 0;
}
