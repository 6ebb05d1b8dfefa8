// flashprobe run: run one kernel on one problem with random inputs and save the case as NPY files
// (problem.json, q/k/v/o/lse.npy, dense BSHD) — the same files `flashprobe check` reads, so a case
// recorded on a GPU is re-checked against the oracle anywhere, a machine without a GPU included.
//
//   flashprobe run --kernel mma --problem p.json --seed 7 --out-dir case/
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "command.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/npy.h"
#include "flashprobe/core/problem_io.h"
#include "flashprobe/core/record.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/kernels/variants.h"
#include "flashprobe/kernels/select.h"

namespace flashprobe::cli {
namespace {

NpyArray to_npy(const Tensor& t, std::vector<std::int64_t> shape) {
  NpyArray a;
  a.type = t.dtype == DType::f16 ? NpyType::f2 : t.dtype == DType::bf16 ? NpyType::u2 : NpyType::f4;
  a.shape = std::move(shape);
  a.data = t.bytes;
  return a;
}

struct Args {
  std::string kernel, problem, out_dir;
  std::uint64_t seed = 1;
};

int run(const Args& a) {
  AttnProblem p = read_problem_file(a.problem);
  if (!p.q.is_zero() || !p.k.is_zero() || !p.v.is_zero() || !p.o.is_zero())
    throw UsageError(a.problem + ": run saves dense BSHD NPY files; remove the strides/layout from the problem");
  // A kernel or a variant (variants.h) by name, resolved before any device is touched.
  const bool automatic = a.kernel.empty() || a.kernel == "auto";
  std::optional<kernels::KernelInfo> named;
  if (!automatic) named = kernels::kernel_or_variant(a.kernel);
  const DeviceInfo dev = require_device();
  const kernels::KernelInfo* k = nullptr;
  std::string why;
  if (automatic) {
    const auto sel = kernels::select(dev, p);
    if (!sel) throw UsageError("no kernel can run this problem here:\n" + sel.describe());
    k = sel.kernel;
    why = sel.reason;
  } else {
    k = &*named;
    if (auto s = k->supports(dev, p); !s) throw UsageError("--kernel " + a.kernel + " refuses the problem: " + s.reason);
  }
  const AttnInputs in = random_inputs(p, a.seed);
  const kernels::RunResult r = kernels::run_kernel(*k, p, in);
  std::filesystem::create_directories(a.out_dir);
  const std::string d = a.out_dir + "/";
  nlohmann::json pj = p;
  write_json_file(d + "problem.json", pj);
  const std::int64_t B = p.batch, Sq = p.sq, Sk = p.sk, Hq = p.hq, Hkv = p.hkv;
  npy_save(d + "q.npy", to_npy(in.q, {B, Sq, Hq, p.d}));
  npy_save(d + "k.npy", to_npy(in.k, {B, Sk, Hkv, p.d}));
  npy_save(d + "v.npy", to_npy(in.v, {B, Sk, Hkv, p.dv}));
  npy_save(d + "o.npy", to_npy(r.out.o, {B, Sq, Hq, p.dv}));
  Tensor lse(DType::f32, static_cast<std::int64_t>(r.out.lse.size()));
  std::memcpy(lse.bytes.data(), r.out.lse.data(), lse.bytes.size());
  npy_save(d + "lse.npy", to_npy(lse, {B, Hq, Sq}));
  nlohmann::json rec = record_header("run");
  rec["kernel"] = k->name;
  rec["selection"] = why;
  rec["seed"] = a.seed;
  rec["problem"] = p;
  rec["findings"] = r.describe();
  write_json_file(d + "run.json", rec);
  std::cout << k->name << " ran " << p.id() << " -> " << a.out_dir << " (" << r.describe() << ")\n";
  return r.clean() ? 0 : 1;
}

CommandRegistration reg("run", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("run", "Run a kernel on random inputs and save the case as NPY files (needs a GPU)");
  auto a = std::make_shared<Args>();
  sub->add_option("--problem", a->problem, "Problem JSON")->required()->check(CLI::ExistingFile);
  sub->add_option("--kernel", a->kernel,
                  "Kernel name, a variant of one for measurements (<kernel>/<option>=<value>, e.g. mma/order=rows; "
                  "an unknown name lists them), or auto (the dispatcher's choice)");
  sub->add_option("--seed", a->seed, "Input seed")->capture_default_str();
  sub->add_option("--out-dir", a->out_dir, "Where to write the case")->required();
  return [a] { return run(*a); };
});

}  // namespace
}  // namespace flashprobe::cli
