// The backward kernels on the GPU (label gpu, skips without a device): gradients agree with the
// oracle (check_backward) over a feature grid and every dtype, guard bands intact and every gradient
// written, finite where the oracle is, deterministic mode bitwise equal over FLASHPROBE_BWD_REPEATS
// runs (default 20), GQA gradients equal the summed gradients of the repeated-head MHA problem, a
// batch with per-element key lengths equals its elements run one by one, query chunks (chunked
// prefill) give the same dQ and dK/dV summing to the whole, and every backward mutant fails at least
// one case, shrunk greedily (tests/common/shrink_problem.h); and FLASHPROBE_BWD_CASES random
// problems (default 100, seed FLASHPROBE_BWD_SEED; tests/common/backward_random.h draws them) per
// kernel, counted per kernel and dtype, the soak's knob (FLASHPROBE_BWD_KERNEL names one kernel: its
// own domain only). With
// FLASHPROBE_RECORD_DIR set, each test writes its record there (backward-<what>.json, schema
// flashprobe.backward_gpu/1): reports/ reads them for the report's backward section.
// A kernel that does not support a case (mma_bwd: f16/bf16, d = dv in {64, 128}) skips it, counted
// and printed as skipped; every kernel must run some cases of each test, or the test fails.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>

#include "../common/backward_inputs.h"
#include "../common/backward_large_logits.h"
#include "../common/backward_random.h"
#include "../common/gpu_skip.h"
#include "../common/gqa_as_mha.h"
#include "../common/shrink_problem.h"
#include "flashprobe/core/record.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/mutants.h"
#include "flashprobe/oracle/grad_check.h"
#include "flashprobe/oracle/reference.h"

namespace flashprobe::kernels {
namespace {

using oracle::testing::backward_inputs;

struct Case {
  AttnProblem p;
  std::uint64_t seed;
};

// Every feature, small enough for the CPU oracle: tails of the 8-key blocks, GQA/MQA, both causal
// alignments, windows, soft-cap, ALiBi, per-batch key lengths (one empty), rows that see no key,
// odd and large head dims, Dv != D, BHSD and padded strides; and for the tensor-core kernels'
// 64-key, 64-row tiles: several key blocks and query tiles (whole tiles inside, partial at the
// edges) at d = 128, and rows that do not start 16-byte aligned (element-wise tile loads).
std::vector<Case> grid(DType t) {
  std::vector<Case> v;
  std::uint64_t seed = 1;
  auto add = [&](AttnProblem p) {
    p.dtype = p.out_dtype = t;
    v.push_back({p, seed++});
  };
  for (Causal c : {Causal::none, Causal::bottom_right, Causal::top_left})
    for (int variant = 0; variant < 10; ++variant) {
      AttnProblem p;
      p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 37; p.sk = 53; p.d = p.dv = 64;
      p.causal = c;
      switch (variant) {
        case 1: p.hq = 6; p.hkv = 1; p.d = 59; p.dv = 40; break;
        case 2: p.window_left = 5; p.window_right = 3; break;
        case 3: p.softcap = 2; p.scale = 0.5; break;
        case 4: p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625}; break;
        case 5: p.seqlens_k = {0, 29}; p.with_layout(TensorLayout::bhsd); break;
        case 6: p.sq = 60; p.sk = 17; p.d = p.dv = 256; break;  // bottom-right: rows that see no key
        case 7: p.d = 128; p.dv = 96;
                p.q = {37 * 4 * 136, 4 * 136, 136, 1}; p.o = {37 * 4 * 100, 4 * 100, 100, 1}; break;
        case 8: p.batch = 1; p.sq = 150; p.sk = 200; p.d = p.dv = 128; break;
        case 9: p.batch = 1; p.hq = 2; p.hkv = 1; p.sq = 130; p.sk = 190; p.window_left = 70;
                p.q = {130 * 2 * 67, 2 * 67, 67, 1}; p.o = {130 * 2 * 66, 2 * 66, 66, 1};
                p.v = {190 * 65, 65, 65, 1}; break;
        default: break;
      }
      add(p);
    }
  return v;
}

struct Outcome {
  bool pass = false;
  std::string why;
  BackwardRunResult run;
};

// The backward kernels of this device's family, those that take a plain f16 problem on it: another
// vendor's tensor-core kernel (mma_bwd on AMD, mma_bwd_amd on NVIDIA) is neither run nor counted.
std::vector<std::reference_wrapper<const BackwardKernelInfo>> device_kernels() {
  static const DeviceInfo dev = require_device();
  AttnProblem p;
  p.sq = p.sk = 16;
  p.d = p.dv = 64;
  p.dtype = p.out_dtype = DType::f16;
  std::vector<std::reference_wrapper<const BackwardKernelInfo>> v;
  for (const BackwardKernelInfo& k : backward_kernels())
    if (k.supports(dev, p)) v.push_back(std::cref(k));
  return v;
}

std::vector<const BackwardKernelInfo*> all_kernels() {
  std::vector<const BackwardKernelInfo*> v;
  for (const BackwardKernelInfo& k : device_kernels()) v.push_back(&k);
  return v;
}

// Cases run and skipped per kernel (a kernel's unsupported problems are skipped, never passed).
struct Tally {
  std::map<std::string, int> run, skipped;
  bool supported(const BackwardKernelInfo& k, const AttnProblem& p) {
    static const DeviceInfo dev = require_device();
    const bool ok = static_cast<bool>(k.supports(dev, p));
    ++(ok ? run : skipped)[k.name];
    return ok;
  }
  // "name: R run, S skipped" per kernel (of `kernels`, default all), and the kernels that ran nothing.
  std::string summary(std::vector<std::string>* idle = nullptr,
                      const std::vector<const BackwardKernelInfo*>& kernels = all_kernels()) const {
    std::string s;
    for (const BackwardKernelInfo* kp : kernels) {
      const BackwardKernelInfo& k = *kp;
      const int r = run.count(k.name) ? run.at(k.name) : 0, sk = skipped.count(k.name) ? skipped.at(k.name) : 0;
      s += (s.empty() ? "" : "; ") + k.name + ": " + std::to_string(r) + " run, " + std::to_string(sk) + " skipped";
      if (r == 0 && idle) idle->push_back(k.name);
    }
    return s;
  }
};

Outcome judge(const BackwardKernelInfo& k, const AttnProblem& p, const AttnInputs& in, const oracle::BackwardInputs& bw) {
  Outcome o;
  o.run = run_backward(k, p, in, {bw.dout, bw.o, bw.lse});
  const oracle::BackwardCheckResult r = oracle::check_backward(p, in, bw, {o.run.dq, o.run.dk, o.run.dv});
  o.pass = r.pass && o.run.clean();
  o.why = r.pass ? o.run.describe() : r.summary();
  return o;
}

// The record of one test: `what` names it (grid, random, determinism, gqa, varlen, chunked, mutants).
// Its "rows" (check, subject, run, skipped, failed, note) are what the report's backward section
// shows (reports/fpreport/backward.py); the summary counts the test itself from GoogleTest's JSON.
void write_record(const std::string& what, nlohmann::json payload) {
  const char* dir = std::getenv("FLASHPROBE_RECORD_DIR");
  if (!dir || !*dir) return;
  nlohmann::json rec = record_header("backward_gpu");
  rec["evidence"] = "measured";
  rec["test"] = what;
  for (auto& [k, v] : payload.items()) rec[k] = v;
  std::filesystem::create_directories(dir);
  write_json_file(std::string(dir) + "/backward-" + what + ".json", rec);
}

nlohmann::json result_row(const std::string& check, const std::string& subject, int run, int failed, const std::string& note = "") {
  return {{"check", check}, {"subject", subject}, {"run", run}, {"skipped", 0}, {"failed", failed}, {"note", note}};
}


TEST(BackwardGpu, GradientsAgreeWithTheOracleOnTheGrid) {
  FP_SKIP_WITHOUT_GPU();
  int run = 0;
  Tally tally;
  std::vector<std::string> failures;
  nlohmann::json rows = nlohmann::json::array();
  for (const BackwardKernelInfo& k : device_kernels()) {
    int krun = 0, kfailed = 0;
    for (DType t : {DType::f16, DType::bf16, DType::f32})
      for (const Case& c : grid(t)) {
        if (!tally.supported(k, c.p)) continue;
        const AttnInputs in = random_inputs(c.p, c.seed);
        const oracle::BackwardInputs bw = backward_inputs(c.p, in, c.seed + 100);
        const Outcome o = judge(k, c.p, in, bw);
        ++run, ++krun;
        if (!o.pass) ++kfailed, failures.push_back(k.name + " " + c.p.id() + ": " + o.why);
      }
    nlohmann::json row = result_row("backward grid", k.name, krun, kfailed, "f16, bf16, f32 over every feature");
    row["skipped"] = tally.skipped[k.name];  // cases outside the kernel's domain
    rows.push_back(std::move(row));
  }
  std::vector<std::string> idle;
  std::cout << "[backward grid] " << run << " case(s) run, " << run - static_cast<int>(failures.size()) << " passed ("
            << tally.summary(&idle) << ")\n";
  for (auto& f : failures) std::cout << "  FAIL " << f << "\n";
  write_record("grid", {{"rows", rows}, {"failures", failures}});
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_TRUE(idle.empty()) << idle.front() << " ran no grid case";
}

int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e && std::atoi(e) > 0 ? std::atoi(e) : fallback;
}

TEST(BackwardGpu, RandomProblemsAgreeWithTheOracle) {
  FP_SKIP_WITHOUT_GPU();
  const int cases = env_int("FLASHPROBE_BWD_CASES", 100);
  const std::uint64_t seed = static_cast<std::uint64_t>(env_int("FLASHPROBE_BWD_SEED", 1));
  std::mt19937_64 rng(seed);
  // FLASHPROBE_BWD_KERNEL=<name>: that kernel only, each draw repeated until it takes the problem (a
  // soak of one kernel's own domain, e.g. mma_bwd's quarter of the draws); unset: every kernel.
  std::vector<const BackwardKernelInfo*> kernels = all_kernels();
  if (const char* only = std::getenv("FLASHPROBE_BWD_KERNEL"); only && *only) {
    const BackwardKernelInfo* k = find_backward_kernel(only);
    ASSERT_NE(k, nullptr) << "FLASHPROBE_BWD_KERNEL=" << only << ": no such backward kernel (have: " << backward_kernel_names() << ")";
    kernels = {k};
  }
  int run = 0;
  Tally tally;
  // Per kernel and dtype: problems run, skipped (outside the kernel's domain) and failed, the rows of
  // the record (a soak's count per dtype).
  std::map<std::pair<std::string, DType>, std::array<int, 3>> per_dtype;
  std::vector<std::string> failures;
  const DeviceInfo dev = require_device();
  for (int c = 0; c < cases; ++c) {
    const testing::BackwardDraw d = testing::next_backward_draw(rng, dev, kernels.size() == 1 ? kernels[0] : nullptr);
    const AttnProblem& p = d.p;
    const AttnInputs in = random_inputs(p, d.inputs_seed);
    const oracle::BackwardInputs bw = backward_inputs(p, in, d.grads_seed);
    for (const BackwardKernelInfo* kp : kernels) {
      const BackwardKernelInfo& k = *kp;
      std::array<int, 3>& n = per_dtype[{k.name, p.dtype}];
      if (!tally.supported(k, p)) {
        ++n[1];
        continue;
      }
      const Outcome o = judge(k, p, in, bw);
      ++run, ++n[0];
      if (!o.pass) ++n[2], failures.push_back(k.name + " case " + std::to_string(c) + " (seed " + std::to_string(seed) + ") " + p.id() + ": " + o.why);
    }
  }
  std::vector<std::string> idle;
  std::cout << "[backward random] " << run << " run(s), " << run - static_cast<int>(failures.size()) << " passed, "
            << failures.size() << " failed (" << tally.summary(&idle, kernels) << ")\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const BackwardKernelInfo* k : kernels)
    for (DType t : {DType::f16, DType::bf16, DType::f32}) {
      const auto it = per_dtype.find({k->name, t});
      if (it == per_dtype.end()) continue;
      const auto& [r, skipped, failed] = it->second;
      const std::string dt(dtype_name(t));
      nlohmann::json row = result_row("backward random", k->name + " " + dt, r, failed,
                                      std::to_string(cases) + " problems, seed " + std::to_string(seed));
      row["skipped"] = skipped;  // problems of this dtype outside the kernel's domain
      row["kernel"] = k->name;
      row["dtype"] = dt;
      rows.push_back(std::move(row));
      std::cout << "  " << k->name << " " << dt << ": " << r << " run, " << skipped << " skipped, " << failed << " failed\n";
    }
  write_record("random", {{"cases", cases}, {"seed", seed}, {"rows", rows},
                          {"failures", std::vector<std::string>(failures.begin(), failures.begin() + std::min<std::size_t>(failures.size(), 20))}});
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) std::cout << "  FAIL " << failures[i] << "\n";
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_TRUE(idle.empty()) << idle.front() << " ran no random case";
}

TEST(BackwardGpu, FiniteWhereTheOracleIsWithLargeLogits) {
  FP_SKIP_WITHOUT_GPU();
  nlohmann::json rows = nlohmann::json::array();
  for (const BackwardKernelInfo& k : device_kernels()) {
    int failed = 0;
    std::string why;
    for (DType t : {DType::f16, DType::bf16}) {
      const AttnProblem p = flashprobe::testing::large_logit_backward_problem(t);  // logits in the hundreds
      ASSERT_TRUE(k.supports(require_device(), p)) << k.name << " " << p.id();
      const AttnInputs in = flashprobe::testing::large_logit_backward_inputs(p);
      const Outcome o = judge(k, p, in, backward_inputs(p, in, flashprobe::testing::kLargeLogitGradsSeed));
      EXPECT_TRUE(o.pass) << k.name << " " << p.id() << ": " << o.why;
      if (!o.pass) ++failed, why = p.id() + ": " + o.why.substr(0, 200);
    }
    rows.push_back(result_row("backward finite with large logits", k.name, 2, failed,
                              failed ? why : "f16, bf16 with logits in the hundreds: finite where the oracle is, guard bands intact"));
  }
  write_record("finite", {{"rows", rows}});
}

TEST(BackwardGpu, DeterministicModeIsBitwiseStableOverRepeats) {
  FP_SKIP_WITHOUT_GPU();
  int kernels_run = 0;
  nlohmann::json rows = nlohmann::json::array();  // one per kernel; the record rewritten after each
  for (const BackwardKernelInfo& kernel : device_kernels()) {
  if (!kernel.deterministic) continue;
  const BackwardKernelInfo* k = &kernel;
  ++kernels_run;
  AttnProblem p;
  p.batch = 2; p.hq = 8; p.hkv = 2; p.sq = 300; p.sk = 700; p.d = p.dv = 128;
  p.dtype = p.out_dtype = DType::bf16;
  p.causal = Causal::bottom_right;
  const AttnInputs in = random_inputs(p, 7);
  const oracle::BackwardInputs bw = backward_inputs(p, in, 8);
  ASSERT_TRUE(k->supports(require_device(), p)) << k->name;
  const BackwardRunResult first = run_backward(*k, p, in, {bw.dout, bw.o, bw.lse});
  ASSERT_TRUE(first.clean()) << k->name << ": " << first.describe();
  const int n = env_int("FLASHPROBE_BWD_REPEATS", 20);
  std::string differs;
  int r = 1;
  for (; r < n && differs.empty(); ++r) {
    const BackwardRunResult again = run_backward(*k, p, in, {bw.dout, bw.o, bw.lse});
    if (again.dq.bytes != first.dq.bytes) differs = "dQ differs on repeat " + std::to_string(r);
    else if (again.dk.bytes != first.dk.bytes) differs = "dK differs on repeat " + std::to_string(r);
    else if (again.dv.bytes != first.dv.bytes) differs = "dV differs on repeat " + std::to_string(r);
  }
  rows.push_back(result_row("backward determinism", k->name, 1, differs.empty() ? 0 : 1,
                            std::to_string(r) + " runs of " + p.id() + (differs.empty() ? " bitwise equal" : ": " + differs)));
  write_record("determinism", {{"repeats", n}, {"rows", rows}});
  ASSERT_TRUE(differs.empty()) << k->name << ": " << differs;
  std::cout << "[determinism] " << k->name << ": " << n << " runs of " << p.id() << " bitwise equal\n";
  }
  EXPECT_GE(kernels_run, 2) << "tiled_bwd_det and the device's tensor-core one (mma_bwd_det, mma_bwd_amd)";
}

// Sets p's dtype to f32 where kernel k takes it, else f16 (the tensor-core kernels), and returns the
// relative tolerance of a comparison between two runs whose results are rounded differently: 1e-5 in
// f32 (summation order only), 2^-8 in f16 (each side rounded to f16 on its own: a few ulps).
double in_widest_dtype(const BackwardKernelInfo& k, AttnProblem& p) {
  p.dtype = p.out_dtype = DType::f32;
  if (!k.supports(require_device(), p)) p.dtype = p.out_dtype = DType::f16;
  return p.dtype == DType::f32 ? 1e-5 : std::ldexp(1.0, -8);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double w = 0;
  for (std::int64_t e = 0; e < a.size(); ++e) w = std::max(w, std::abs(a.get(e) - b.get(e)));
  return w;
}

double max_abs(const Tensor& a) {
  double w = 0;
  for (std::int64_t e = 0; e < a.size(); ++e) w = std::max(w, std::abs(a.get(e)));
  return w;
}

TEST(BackwardGpu, GqaGradientsEqualTheSummedMhaGradients) {
  FP_SKIP_WITHOUT_GPU();
  nlohmann::json rows = nlohmann::json::array();
  for (const BackwardKernelInfo& k : device_kernels()) {
    AttnProblem p;
    p.batch = 1; p.hq = 6; p.hkv = 2; p.sq = 33; p.sk = 41; p.d = p.dv = 64;
    // In f16 each MHA head's dK is rounded before the sum; an unsummed group is off by whole heads.
    const double eps = in_widest_dtype(k, p);
    ASSERT_TRUE(k.supports(require_device(), p)) << k.name << " " << p.id();
    p.causal = Causal::top_left;
    const AttnInputs in = random_inputs(p, 9);
    const auto [m, mi] = testing::gqa_as_mha(p, in);
    const oracle::BackwardInputs bw = backward_inputs(p, in, 10);
    const BackwardRunResult g = run_backward(k, p, in, {bw.dout, bw.o, bw.lse});
    const BackwardRunResult gm = run_backward(k, m, mi, {bw.dout, bw.o, bw.lse});
    double worst = 0, scale = 0;
    const double dq_worst = max_abs_diff(g.dq, gm.dq);
    for (int j = 0; j < p.sk; ++j)
      for (int kv = 0; kv < p.hkv; ++kv)
        for (int x = 0; x < p.d; ++x) {
          double sum = 0;
          for (int h = 0; h < p.hq; ++h)
            if (p.kv_head(h) == kv) sum += gm.dk.get(offset(m.k_strides(), 0, j, h, x));
          const double got = g.dk.get(offset(p.k_strides(), 0, j, kv, x));
          worst = std::max(worst, std::abs(got - sum));
          scale = std::max(scale, std::abs(sum));
        }
    const double tol = eps * std::max(1.0, scale);
    EXPECT_LE(worst, tol) << k.name;
    EXPECT_LE(dq_worst, tol) << k.name << ": dQ of a GQA problem is the MHA problem's";
    rows.push_back(result_row("backward GQA = summed MHA", k.name, 1, worst <= tol && dq_worst <= tol ? 0 : 1,
                               p.id() + ": max |dK - sum dK_mha| " + std::to_string(worst) + ", max |dQ - dQ_mha| " +
                                   std::to_string(dq_worst) + ", tolerance " + std::to_string(tol)));
  }
  write_record("gqa", {{"rows", rows}});
}

// Rows [t0, t0 + n) of batch element b of a [B, S, H, dim] tensor at `ss` into batch element 0, rows
// from 0, of `dst` at `ds`.
void copy_rows(const Tensor& src, const Strides& ss, int b, int t0, Tensor& dst, const Strides& ds, int n, int heads, int dim) {
  for (int t = 0; t < n; ++t)
    for (int h = 0; h < heads; ++h)
      for (int x = 0; x < dim; ++x) dst.set(offset(ds, 0, t, h, x), src.get(offset(ss, b, t0 + t, h, x)));
}

// One piece of a bigger problem: batch element b, query rows [i0, i0 + s.sq), keys [0, s.sk), as the
// problem s of batch 1 with its inputs, dO, O and LSE cut from the whole's.
struct Piece {
  AttnProblem s;
  AttnInputs in;
  BackwardRunInputs bw;
  int b = 0, i0 = 0;
};

Piece cut(const AttnProblem& p, const AttnInputs& in, const oracle::BackwardInputs& bw, int b, int i0, int sq, int sk) {
  Piece c;
  c.b = b, c.i0 = i0;
  c.s = p;
  c.s.batch = 1, c.s.sq = sq, c.s.sk = sk;
  c.s.seqlens_k.clear();
  c.in.q = Tensor(p.dtype, c.s.q_span());
  c.in.k = Tensor(p.dtype, c.s.k_span());
  c.in.v = Tensor(p.dtype, c.s.v_span());
  copy_rows(in.q, p.q_strides(), b, i0, c.in.q, c.s.q_strides(), sq, p.hq, p.d);
  copy_rows(in.k, p.k_strides(), b, 0, c.in.k, c.s.k_strides(), sk, p.hkv, p.d);
  copy_rows(in.v, p.v_strides(), b, 0, c.in.v, c.s.v_strides(), sk, p.hkv, p.dv);
  c.bw.dout = Tensor(p.out_dtype, c.s.o_span());
  c.bw.o = Tensor(p.out_dtype, c.s.o_span());
  copy_rows(bw.dout, p.o_strides(), b, i0, c.bw.dout, c.s.o_strides(), sq, p.hq, p.dv);
  copy_rows(bw.o, p.o_strides(), b, i0, c.bw.o, c.s.o_strides(), sq, p.hq, p.dv);
  for (int h = 0; h < p.hq; ++h)
    for (int i = 0; i < sq; ++i) c.bw.lse.push_back(bw.lse[static_cast<std::size_t>((std::int64_t{b} * p.hq + h) * p.sq + i0 + i)]);
  return c;
}

// The largest difference between a piece's gradient and the whole's rows [t0, t0 + n) of element b.
double piece_diff(const Tensor& whole, const Strides& ws, const Tensor& piece, const Strides& ps, int b, int t0, int n, int heads, int dim) {
  double w = 0;
  for (int t = 0; t < n; ++t)
    for (int h = 0; h < heads; ++h)
      for (int x = 0; x < dim; ++x)
        w = std::max(w, std::abs(whole.get(offset(ws, b, t0 + t, h, x)) - piece.get(offset(ps, 0, t, h, x))));
  return w;
}

// Varlen: a batch whose elements have their own key counts (one empty) gives, element by element,
// the gradients of that element run alone as a batch of one. dK and dV never cross elements, nor
// does dQ: bitwise equal for every kernel except the atomic kernels' dQ (its addition order varies
// from run to run: within 1e-5 in f32, 2^-8 in f16).
TEST(BackwardGpu, AVarlenBatchEqualsItsElementsRunAlone) {
  FP_SKIP_WITHOUT_GPU();
  nlohmann::json rows = nlohmann::json::array();
  for (const BackwardKernelInfo& k : device_kernels()) {
    AttnProblem p;
    p.batch = 3; p.hq = 4; p.hkv = 2; p.sq = 24; p.sk = 70; p.d = p.dv = 64;
    const double eps = in_widest_dtype(k, p);
    p.causal = Causal::bottom_right;
    p.seqlens_k = {70, 33, 0};
    const AttnInputs in = random_inputs(p, 21);
    const oracle::BackwardInputs bw = backward_inputs(p, in, 22);
    const BackwardRunResult whole = run_backward(k, p, in, {bw.dout, bw.o, bw.lse});
    ASSERT_TRUE(whole.clean()) << whole.describe();
    double dq = 0, dkv = 0;
    for (int b = 0; b < p.batch; ++b) {
      const Piece c = cut(p, in, bw, b, 0, p.sq, p.keys(b));
      const BackwardRunResult r = run_backward(k, c.s, c.in, c.bw);
      ASSERT_TRUE(r.clean()) << c.s.id() << ": " << r.describe();
      dq = std::max(dq, piece_diff(whole.dq, p.q_strides(), r.dq, c.s.q_strides(), b, 0, p.sq, p.hq, p.d));
      dkv = std::max(dkv, piece_diff(whole.dk, p.k_strides(), r.dk, c.s.k_strides(), b, 0, c.s.sk, p.hkv, p.d));
      dkv = std::max(dkv, piece_diff(whole.dv, p.v_strides(), r.dv, c.s.v_strides(), b, 0, c.s.sk, p.hkv, p.dv));
    }
    const double dq_tol = k.deterministic ? 0.0 : eps * std::max(1.0, max_abs(whole.dq));
    EXPECT_EQ(dkv, 0.0) << k.name << ": dK/dV of an element differ from the element run alone";
    EXPECT_LE(dq, dq_tol) << k.name << ": dQ of an element differs from the element run alone";
    rows.push_back(result_row("backward varlen = per element", k.name, 1, dkv == 0 && dq <= dq_tol ? 0 : 1,
                               p.id() + ": max diff dK/dV " + std::to_string(dkv) + " (bitwise required), dQ " + std::to_string(dq) +
                                   (k.deterministic ? " (bitwise required)" : " (atomics: within " + std::to_string(dq_tol) + ")")));
  }
  write_record("varlen", {{"rows", rows}});
}

// Chunked prefill: the query rows split into chunks, chunk [a, a + n) run as its own problem over the
// keys its rows can see (bottom-right causal with a window: the first keys(b) - (sq - a - n) keys),
// give the same dQ rows, and dK, dV summed over the chunks (within 1e-5 in f32, 2^-8 in f16 where
// every chunk's dK is rounded on its own). The deterministic kernels' dQ rows are bitwise equal
// (each row walks the same key blocks in the same order; blocks a row does not see add exact zeros).
TEST(BackwardGpu, QueryChunksGiveTheSameDqAndSumToDkDv) {
  FP_SKIP_WITHOUT_GPU();
  nlohmann::json rows = nlohmann::json::array();
  for (const BackwardKernelInfo& k : device_kernels()) {
    AttnProblem p;
    p.batch = 2; p.hq = 4; p.hkv = 2; p.sq = 64; p.sk = 100; p.d = p.dv = 64;
    const double eps = in_widest_dtype(k, p);
    p.causal = Causal::bottom_right;
    p.window_left = 40;
    const AttnInputs in = random_inputs(p, 31);
    const oracle::BackwardInputs bw = backward_inputs(p, in, 32);
    const BackwardRunResult whole = run_backward(k, p, in, {bw.dout, bw.o, bw.lse});
    ASSERT_TRUE(whole.clean()) << whole.describe();
    Tensor dk_sum(DType::f32, p.k_span()), dv_sum(DType::f32, p.v_span());  // zeros
    double dq = 0;
    for (int b = 0; b < p.batch; ++b)
      for (auto [a, n] : {std::pair{0, 16}, {16, 8}, {24, 40}}) {
        const Piece c = cut(p, in, bw, b, a, n, p.keys(b) - (p.sq - a - n));
        const BackwardRunResult r = run_backward(k, c.s, c.in, c.bw);
        ASSERT_TRUE(r.clean()) << c.s.id() << ": " << r.describe();
        dq = std::max(dq, piece_diff(whole.dq, p.q_strides(), r.dq, c.s.q_strides(), b, a, n, p.hq, p.d));
        for (int j = 0; j < c.s.sk; ++j)
          for (int h = 0; h < p.hkv; ++h) {
            for (int x = 0; x < p.d; ++x) {
              const std::int64_t e = offset(p.k_strides(), b, j, h, x);
              dk_sum.set(e, dk_sum.get(e) + r.dk.get(offset(c.s.k_strides(), 0, j, h, x)));
            }
            for (int x = 0; x < p.dv; ++x) {
              const std::int64_t e = offset(p.v_strides(), b, j, h, x);
              dv_sum.set(e, dv_sum.get(e) + r.dv.get(offset(c.s.v_strides(), 0, j, h, x)));
            }
          }
      }
    const double tol = eps * std::max({1.0, max_abs(whole.dk), max_abs(whole.dv), max_abs(whole.dq)});
    const double dkv = std::max(max_abs_diff(whole.dk, dk_sum), max_abs_diff(whole.dv, dv_sum));
    const double dq_tol = k.deterministic ? 0.0 : tol;
    EXPECT_LE(dkv, tol) << k.name << ": dK/dV of the chunks do not sum to the whole's";
    EXPECT_LE(dq, dq_tol) << k.name << ": a chunk's dQ rows differ from the whole's";
    rows.push_back(result_row("backward chunks = whole", k.name, 1, dkv <= tol && dq <= dq_tol ? 0 : 1,
                               p.id() + " in query chunks of 16, 8, 40: max diff dK/dV " + std::to_string(dkv) + " (within " +
                                   std::to_string(tol) + "), dQ " + std::to_string(dq) +
                                   (k.deterministic ? " (bitwise required)" : " (within the tolerance)")));
  }
  write_record("chunked", {{"rows", rows}});
}

// Many key blocks reaching the same query rows at once: where a dQ accumulated across key blocks
// without atomics loses updates (bwd_dq_race). 512 blocks of tiled_bwd walk the 64 rows together.
std::vector<Case> race_cases() {
  std::vector<Case> v;
  for (DType t : {DType::f16, DType::bf16}) {
    AttnProblem p;
    p.batch = 1; p.hq = p.hkv = 2; p.sq = 64; p.sk = 2048; p.d = p.dv = 64;
    p.dtype = p.out_dtype = t;
    v.push_back({p, 500});
  }
  return v;
}

TEST(BackwardGpu, EveryBackwardMutantIsKilled) {
  FP_SKIP_WITHOUT_GPU();
  std::vector<std::string> survivors;
  nlohmann::json muts = nlohmann::json::array(), rows = nlohmann::json::array();
  std::vector<Case> cases = grid(DType::f16), more = grid(DType::bf16), race = race_cases();
  cases.insert(cases.end(), more.begin(), more.end());
  cases.insert(cases.end(), race.begin(), race.end());
  for (const BackwardMutant& m : backward_mutants()) {
    // A case fails when the mutant's gradients fail the oracle or the run (guards, NaN poison); a
    // device error counts as a failure, a refusal of the problem does not.
    auto fails = [&](const AttnProblem& p, std::uint64_t seed, std::string* why) {
      try {
        const AttnInputs in = random_inputs(p, seed);
        const Outcome o = judge(m.kernel, p, in, backward_inputs(p, in, seed + 100));
        if (why) *why = o.why.substr(0, 300);
        return !o.pass;
      } catch (const GpuError& e) {
        if (why) *why = e.what();
        return true;
      } catch (const std::exception&) {
        return false;
      }
    };
    const Case* killer = nullptr;
    std::string why;
    int tried = 0;
    for (const Case& c : cases) {
      if (!m.kernel.supports(require_device(), c.p)) continue;  // another kernel family's domain
      ++tried;
      if (fails(c.p, c.seed, &why)) {
        killer = &c;
        break;
      }
    }
    nlohmann::json j = {{"name", m.meta.name}, {"kernel", m.meta.kernel}, {"description", m.meta.description},
                        {"expected_killer", m.meta.killed_by}, {"killed", killer != nullptr}, {"cases", tried}};
    if (killer) {
      const testing::Shrunk sh = testing::shrink_problem(killer->p, [&](const AttnProblem& q) { return fails(q, killer->seed, nullptr); }, 150);
      std::string shrunk_why;
      fails(sh.p, killer->seed, &shrunk_why);
      std::cout << "killed   " << m.meta.name << " by " << killer->p.id() << ": " << why.substr(0, 200) << "\n"
                << "  shrunk to " << sh.p.id() << " (seed " << killer->seed << ", " << sh.steps << " steps, " << sh.tries
                << " tries): " << shrunk_why.substr(0, 200) << "\n";
      j["killed_by"] = "gradient agreement with the oracle (check_backward)";
      j["case"] = killer->p.id();
      j["failure"] = why;
      j["shrunk"] = sh.p.id();
      j["shrunk_problem"] = sh.p;
      j["shrunk_seed"] = killer->seed;
      j["shrink_steps"] = sh.steps;
      j["shrunk_failure"] = shrunk_why;
    } else {
      std::cout << "SURVIVED " << m.meta.name << " (" << tried << " cases)\n";
      survivors.push_back(m.meta.name);
    }
    muts.push_back(j);
    rows.push_back(result_row("backward mutants", m.meta.name, 1, killer ? 0 : 1,
                               killer ? "killed, shrunk to " + j["shrunk"].get<std::string>() : "survived " + std::to_string(tried) + " cases"));
  }
  write_record("mutants", {{"mutants", muts}, {"rows", rows}});
  EXPECT_TRUE(survivors.empty()) << survivors.size() << " backward mutant(s) survived, first: " << survivors.front();
}

}  // namespace
}  // namespace flashprobe::kernels
