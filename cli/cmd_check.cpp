// flashprobe check: judge a kernel's output, saved as NPY from any framework, against the oracle.
//
//   flashprobe check --problem p.json --q q.npy --k k.npy --v v.npy --o o.npy [--lse lse.npy]
//                    [--json out.json] [--rows N] [--ref-o o64.npy] [--allow-nan-inputs]
//                    [--do do.npy --dq dq.npy --dk dk.npy --dv dv.npy]
// NPY arrays are dense BSHD in C order: Q [B,Sq,Hq,D], K [B,Sk,Hkv,D], V [B,Sk,Hkv,Dv],
// O [B,Sq,Hq,Dv], LSE [B,Hq,Sq] f32. Q/K/V have the problem's dtype (f16: <f2, bf16: <u2 or <i2 bit
// patterns, f32: <f4), O its out_dtype. Exit 0 pass, 1 fail, 2 bad input (check_footer(): the help).
// --ref-o compares the oracle itself with another double-precision reference (e.g. PyTorch's float64
// math SDPA) and fails when they differ by more than --ref-rtol relative to max|O|.
// --do with any of --dq --dk --dv also checks a backward kernel's gradients (oracle/grad_check.h):
// dO [B,Sq,Hq,Dv] in out_dtype, dQ/dK/dV shaped like Q/K/V in the dtype; the verdict goes under
// "backward" in the same record, and the exit code covers both.
#include <sys/wait.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "command.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/npy.h"
#include "flashprobe/core/problem_io.h"
#include "flashprobe/core/record.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/grad_check.h"

namespace flashprobe::cli {
namespace {

struct Args {
  bool mutants = false, allow_nan_inputs = false;
  std::string problem, q, k, v, o, lse, json, ref_o;
  std::string dout, dq, dk, dv;  // the backward's files
  int rows = 0;
  std::uint64_t seed = 0;
  double ref_rtol = 1e-10;
};

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

void expect_shape(const NpyArray& a, const std::string& path, const char* what, std::vector<std::int64_t> want) {
  if (a.shape != want)
    throw UsageError(path + ": " + what + " has shape " + shape_str(a.shape) + " but the problem needs " + shape_str(want));
}

NpyType npy_type_for(DType t) { return t == DType::f16 ? NpyType::f2 : t == DType::bf16 ? NpyType::u2 : NpyType::f4; }
std::string npy_names_for(DType t) {
  return t == DType::f16 ? "<f2" : t == DType::bf16 ? "<u2 or <i2 (bf16 bit patterns)" : "<f4";
}

// A tensor of dtype t from an NPY that must hold exactly that type and shape (checked on the header,
// before the data is read).
Tensor load_tensor(const std::string& path, const char* what, DType t, const char* dtype_field,
                   const std::vector<std::int64_t>& shape) {
  const NpyArray a = npy_load(path, [&](const NpyArray& h) {
    if (h.type != npy_type_for(t))
      throw UsageError(path + ": " + what + " is stored as " + npy_type_descr(h.type) + " but the problem's " +
                       dtype_field + " is " + std::string(dtype_name(t)) + ", which must be stored as " + npy_names_for(t));
    expect_shape(h, path, what, shape);
  });
  Tensor out(t, a.numel());
  out.bytes = a.data;
  return out;
}

int run(const Args& a) {
  if (!a.json.empty()) require_writable_file(a.json, "--json");  // before the work, not after printing PASS
  AttnProblem p = read_problem_file(a.problem);
  const AttnProblem dense = AttnProblem(p).with_layout(TensorLayout::bshd);
  for (auto [s, d, name] : {std::tuple{p.q, dense.q, "q"}, {p.k, dense.k, "k"}, {p.v, dense.v, "v"}, {p.o, dense.o, "o"}})
    if (!s.is_zero() && !(s == d))
      throw UsageError(a.problem + ": " + name + "_strides/layout describe a non-BSHD layout, but NPY inputs are dense "
                       "BSHD arrays; remove the strides (and \"layout\") from the problem");
  p.q = p.k = p.v = p.o = Strides{};
  const bool grads = !a.dq.empty() || !a.dk.empty() || !a.dv.empty();
  if (grads && a.dout.empty()) throw UsageError("checking --dq/--dk/--dv needs --do (the upstream gradient dO)");
  if (!grads && !a.dout.empty()) throw UsageError("--do is given but none of --dq, --dk, --dv (the gradients to check)");
  if (a.o.empty() && a.ref_o.empty() && !grads)
    throw UsageError("check needs --o (the kernel's output), --ref-o (a float64 reference) or --do with --dq/--dk/--dv");

  const std::int64_t B = p.batch, Sq = p.sq, Sk = p.sk, Hq = p.hq, Hkv = p.hkv, D = p.d, Dv = p.dv;
  AttnInputs in{load_tensor(a.q, "Q", p.dtype, "dtype", {B, Sq, Hq, D}),
                load_tensor(a.k, "K", p.dtype, "dtype", {B, Sk, Hkv, D}),
                load_tensor(a.v, "V", p.dtype, "dtype", {B, Sk, Hkv, Dv})};

  nlohmann::json rec = record_header("check");
  rec["files"] = {{"problem", a.problem}, {"q", a.q}, {"k", a.k}, {"v", a.v}, {"o", a.o}, {"lse", a.lse}, {"ref_o", a.ref_o}};
  if (grads) rec["files"].update({{"do", a.dout}, {"dq", a.dq}, {"dk", a.dk}, {"dv", a.dv}});
  bool pass = true;

  AttnOutputs out;
  if (!a.o.empty()) out.o = load_tensor(a.o, "O", p.out_dtype, "out_dtype", {B, Sq, Hq, Dv});
  if (!a.lse.empty()) {
    const NpyArray l = npy_load(a.lse, [&](const NpyArray& h) {
      if (h.type != NpyType::f4 && h.type != NpyType::f8)
        throw UsageError(a.lse + ": LSE is stored as " + npy_type_descr(h.type) + " but must be <f4 (or <f8)");
      expect_shape(h, a.lse, "LSE", {B, Hq, Sq});
    });
    for (double v : l.to_doubles()) out.lse.push_back(static_cast<float>(v));
  }
  oracle::BackwardInputs bw;
  oracle::KernelGradients kg;
  if (grads) {  // loaded before any check runs, so that a bad file exits 2 without a verdict
    bw.dout = load_tensor(a.dout, "dO", p.out_dtype, "out_dtype", {B, Sq, Hq, Dv});
    if (!a.dq.empty()) kg.dq = load_tensor(a.dq, "dQ", p.dtype, "dtype", {B, Sq, Hq, D});
    if (!a.dk.empty()) kg.dk = load_tensor(a.dk, "dK", p.dtype, "dtype", {B, Sk, Hkv, D});
    if (!a.dv.empty()) kg.dv = load_tensor(a.dv, "dV", p.dtype, "dtype", {B, Sk, Hkv, Dv});
    bw.o = out.o;
    bw.lse = out.lse;
  }

  if (!a.o.empty()) {
    oracle::CheckOptions opt;
    opt.max_rows = a.rows;
    opt.seed = a.seed;
    opt.allow_nan_inputs = a.allow_nan_inputs;
    const oracle::CheckResult r = oracle::check(p, in, out, opt);
    std::cout << r.summary() << "\n";
    rec.update(r.to_json());
    pass = r.pass;
  }

  if (!a.ref_o.empty()) {
    const NpyArray ro = npy_load(a.ref_o, [&](const NpyArray& h) {
      if (h.type == NpyType::u2 || h.type == NpyType::i4)
        throw UsageError(a.ref_o + ": the reference O is stored as " + npy_type_descr(h.type) + "; use <f8 (or <f4)");
      expect_shape(h, a.ref_o, "reference O", {B, Sq, Hq, Dv});
    });
    const std::vector<double> other = ro.to_doubles();
    const oracle::Reference ref = oracle::reference(p, in);  // dense BSHD: the same index order as the NPY
    double max_abs = 0, scale = 0;
    long long mismatched_nonfinite = 0;
    for (std::size_t i = 0; i < other.size(); ++i) {
      if (!std::isfinite(other[i]) || !std::isfinite(ref.o[i])) {
        // torch gives NaN for rows that see no key; the oracle gives 0 (docs/attention-semantics.md): count, don't fail
        mismatched_nonfinite += !(other[i] == ref.o[i]);
        continue;
      }
      max_abs = std::max(max_abs, std::abs(other[i] - ref.o[i]));
      scale = std::max(scale, std::abs(ref.o[i]));
    }
    const double rel = scale > 0 ? max_abs / scale : max_abs;
    const bool agree = rel <= a.ref_rtol;
    std::cout << (agree ? "AGREE " : "DIFFER ") << p.id() << "  oracle vs " << a.ref_o << ": max_abs " << max_abs
              << " relative to max|O| " << rel << " (rtol " << a.ref_rtol << ")";
    if (mismatched_nonfinite) std::cout << "  nonfinite in one only: " << mismatched_nonfinite;
    std::cout << "\n";
    rec["ref_o"] = {{"max_abs", max_abs}, {"rel", rel}, {"rtol", a.ref_rtol}, {"agree", agree},
                    {"nonfinite_in_one_only", mismatched_nonfinite}};
    if (a.o.empty()) rec["case_id"] = p.id();
    pass = pass && agree;
  }
  if (grads) {
    const oracle::BackwardCheckResult r = oracle::check_backward(p, in, bw, kg);
    std::cout << r.summary() << "\n";
    rec["backward"] = r.to_json();
    if (!rec.contains("case_id")) rec["case_id"] = p.id();
    pass = pass && r.pass;
  }
  if (!a.json.empty()) write_json_file(a.json, rec);
  return pass ? 0 : 1;
}

// The mutation suite lives in a test binary (mutants are never linked into flashprobe itself):
// $FLASHPROBE_MUTATION_EXE, or tests/test_mutation beside this executable.
int run_mutants() {
  std::string exe;
  if (const char* e = std::getenv("FLASHPROBE_MUTATION_EXE")) exe = e;
  else exe = (std::filesystem::canonical("/proc/self/exe").parent_path() / "tests" / "test_mutation").string();
  if (!std::filesystem::exists(exe))
    throw UsageError("check --mutants: " + exe + " not found (build the GPU tests of this tree, or set FLASHPROBE_MUTATION_EXE)");
  const int status = std::system(exe.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

// `text` broken into lines of at most `width` characters at spaces; continuation lines get `indent`.
std::string wrap(const std::string& text, std::size_t width, const std::string& indent) {
  std::size_t start = text.find_first_not_of(' ');  // a leading indent is kept
  if (start == std::string::npos) return "\n";
  std::string out, line = text.substr(0, start);
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const bool fresh = line.find_first_not_of(' ') == std::string::npos;
    if (!fresh && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    }
    line += (line.find_first_not_of(' ') == std::string::npos ? "" : " ") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

// check --help's closing text: every problem field (the reader's own table), how arrays are stored,
// the diagonal convention and the exit codes.
std::string check_footer() {
  std::string t = "\n" + wrap("Problem JSON (--problem): an object with any of these fields (any other field, a value "
                              "of another JSON type or an integer out of range is an error, exit 2):", 100, "");
  for (const auto& f : problem_fields()) {
    std::string name(f.name);
    name.resize(std::max<std::size_t>(name.size(), 13), ' ');
    t += wrap("  " + name + " " + std::string(f.allowed), 100, std::string(16, ' '));
  }
  const std::string rest = "Example: {\"batch\": 2, \"hq\": 8, \"hkv\": 2, \"sq\": 128, \"sk\": 512, \"d\": 128, \"dtype\": \"bf16\", "
       "\"causal\": \"bottom_right\"}\n"
       "\nDiagonal: key j is visible to query i of batch b when j <= i + diag (causal); a window keeps "
       "i + diag - window_left <= j <= i + diag + window_right and ALiBi subtracts slope[h] * |i + diag - j|, "
       "where diag = keys(b) - sq for bottom_right and for causal none, and diag = 0 for top_left: with "
       "causal top_left, windows and ALiBi are measured from the top-left diagonal too. A row that sees no "
       "key has O = 0 and LSE = -inf (docs/attention-semantics.md).\n"
       "\nArrays (NPY, little-endian, C order, dense BSHD): Q [batch, sq, hq, d], K [batch, sk, hkv, d], "
       "V [batch, sk, hkv, dv] in dtype; O [batch, sq, hq, dv] in out_dtype; LSE [batch, hq, sq] <f4 or <f8 "
       "(natural log). f16 is <f2, f32 is <f4; bf16 is stored as its 16-bit patterns, <u2 or <i2 (numpy: "
       "a.view(np.uint16); torch: t.view(torch.int16).numpy()). The header must be the one numpy writes and "
       "the data exactly the size it declares.\n"
       "\nExit codes: 0 the check passed; 1 the check failed (an element outside its bound, a NaN/Inf where "
       "the reference has none, a bias, an LSE or gradient error, or a gradient it cannot bound: NOT BOUNDED); 2 anything else: bad usage, an unreadable or malformed "
       "file (named, with the field or value at fault), an invalid problem, an unwritable --json (checked "
       "before the work), or an internal error.\n";
  std::size_t start = 0;
  for (std::size_t end; (end = rest.find('\n', start)) != std::string::npos; start = end + 1)
    t += end == start ? "\n" : wrap(rest.substr(start, end - start), 100, "");
  return t;
}

CommandRegistration reg("check", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("check", "Check a kernel's output (NPY files) against the CPU oracle; exit 0 pass, "
                                          "1 fail, 2 bad input");
  sub->footer(check_footer());
  auto a = std::make_shared<Args>();
  sub->add_option("--problem", a->problem, "Problem JSON (its fields are listed below)");
  sub->add_option("--q", a->q, "Q as NPY [B,Sq,Hq,D] in the problem's dtype");
  sub->add_option("--k", a->k, "K as NPY [B,Sk,Hkv,D]");
  sub->add_option("--v", a->v, "V as NPY [B,Sk,Hkv,Dv]");
  sub->add_option("--o", a->o, "The kernel's O as NPY [B,Sq,Hq,Dv] in out_dtype");
  sub->add_option("--lse", a->lse, "The kernel's LSE as NPY [B,Hq,Sq] f32 (natural log; -inf for rows that see no key)");
  sub->add_option("--json", a->json, "Write the check record here");
  sub->add_option("--rows", a->rows, "Check at most N sampled query rows (0: all); NaN/Inf are scanned in every row")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--seed", a->seed, "Seed of the row sample");
  sub->add_option("--do", a->dout, "The upstream gradient dO as NPY [B,Sq,Hq,Dv] in out_dtype (with --dq/--dk/--dv)");
  sub->add_option("--dq", a->dq, "The backward kernel's dQ as NPY [B,Sq,Hq,D] in the problem's dtype");
  sub->add_option("--dk", a->dk, "The backward kernel's dK as NPY [B,Sk,Hkv,D] (summed over each GQA group)");
  sub->add_option("--dv", a->dv, "The backward kernel's dV as NPY [B,Sk,Hkv,Dv] (summed over each GQA group)");
  sub->add_flag("--allow-nan-inputs", a->allow_nan_inputs,
                "Accept NaN in Q/K/V and check that it propagates per IEEE (docs/attention-semantics.md); "
                "without it a NaN input is bad input (exit 2)");
  sub->add_option("--ref-o", a->ref_o, "Another double-precision O (NPY <f8) to compare with the oracle itself");
  sub->add_option("--ref-rtol", a->ref_rtol, "Largest |oracle - ref_o| / max|O| accepted by --ref-o (default 1e-10)");
  sub->add_flag("--mutants", a->mutants,
                "Run the mutation suite instead: every mutant against the property tests (needs a GPU and the "
                "test binary test_mutation of this build tree; exit 1 if a mutant survives)");
  return [a] {
    if (a->mutants) return run_mutants();
    for (auto [v, name] : {std::pair{a->problem, "--problem"}, {a->q, "--q"}, {a->k, "--k"}, {a->v, "--v"}})
      if (v.empty()) throw UsageError(std::string("check needs ") + name + " (or --mutants)");
    return run(*a);
  };
});

}  // namespace
}  // namespace flashprobe::cli
