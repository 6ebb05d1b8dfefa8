#include "flashprobe/gate/subject.h"

#include <cstdlib>
#include <memory>

#include "flashprobe/core/device_memory.h"
#include "flashprobe/core/error.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/kernels/case_arena.h"
#include "flashprobe/kernels/input_fill.h"
#include "flashprobe/kernels/variants.h"
#include "flashprobe/proptests/generators.h"

namespace flashprobe::gate {

using kernels::KernelInfo;
using kernels::Support;

std::string Subject::display() const { return kind == "kernel" ? kernel.name : kind + " " + kernel.name + " (" + ref + ")"; }

void restrict_dtypes(Domain& d, const std::string& dtype) {
  if (dtype.empty()) return;
  d.dtypes = proptests::restrict_dtypes(d.dtypes, dtype.c_str());
}

bool case_arena_from_env() {
  const char* v = std::getenv("FLASHPROBE_CASE_ARENA");
  if (!v || !*v || std::string(v) == "0") return false;
  if (std::string(v) == "1") return true;
  throw UsageError("FLASHPROBE_CASE_ARENA='" + std::string(v) + "': allowed are 0 (the per-case runner, the default) and 1 (the case arena)");
}

namespace {
kernels::RunResult run_on_device(const KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
  return kernels::run_kernel(k, p, in, kernels::RunOptions{});
}

// The device runners of a subject: run_kernel per run, or one case arena for the subject's life
// (shared by its copies), its inputs filled on the device and spot-checked against the host's.
void use_device_runner(Subject& s) {
  if (!case_arena_from_env()) {
    s.run = run_on_device;
    return;
  }
  // Made at the first run, so that a subject is described (domains, refusals) without touching a GPU.
  struct Lazy {
    std::unique_ptr<kernels::CaseArena> arena;
    kernels::CaseArena& get() {
      if (!arena) arena = std::make_unique<kernels::CaseArena>(gpu_memory());
      return *arena;
    }
  };
  auto arena = std::make_shared<Lazy>();
  const DeviceInfo dev = s.dev;
  s.runner = "arena";
  s.run = [arena, dev](const KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
    return kernels::run_in_arena(arena->get(), k, dev, p, kernels::ArenaInputs::of(in)).run;
  };
  s.run_case = [arena, dev](const KernelInfo& k, const Case& c) {
    const InputDist dist = c.input_dist();
    kernels::ArenaRun r = kernels::run_in_arena(arena->get(), k, dev, c.problem, kernels::ArenaInputs::filled([&](void* q, void* kk, void* v) {
      kernels::fill_counter_inputs_at(c.problem, c.seed, dist, q, kk, v);
    }));
    kernels::spot_check_counter_inputs(c.problem, c.seed, dist, r.in);
    return CaseRun{std::move(r.in), std::move(r.run)};
  };
}
}  // namespace

Subject builtin_subject(const KernelInfo& k, const std::string& family, const DeviceInfo& dev, const std::string& dtype) {
  Subject s;
  s.kernel = k;
  s.family = family;
  s.kind = "kernel";
  s.ref = k.name;
  s.dev = dev;
  s.domain = kernel_domain(k, dev);
  // kernel_domain's predicate holds a reference to k: point it at the subject's own copy's twin.
  s.domain.supports = [k, dev](const AttnProblem& p) { return static_cast<bool>(k.supports(dev, p)); };
  restrict_dtypes(s.domain, dtype);
  use_device_runner(s);
  if (const KernelInfo* d = kernels::find_kernel("decode")) s.decoder = *d;
  return s;
}

Subject builtin_subject(const std::string& name, const DeviceInfo& dev, const std::string& dtype) {
  const KernelInfo k = kernels::kernel_or_variant(name);
  return builtin_subject(k, name.substr(0, name.find('/')), dev, dtype);
}

Subject plugin_subject(const Plugin& plugin, const DeviceInfo& dev, const std::string& path, const std::string& dtype) {
  Subject s;
  s.kernel.name = plugin.name();
  s.kernel.description = plugin.description();
  s.kernel.supports = [plugin](const DeviceInfo&, const AttnProblem& p) {
    if (Support v = Support::valid(p); !v) return v;
    const std::string why = plugin.supports(p);
    return why.empty() ? Support::yes() : Support::no(why);
  };
  s.kernel.workspace_bytes = [](const AttnProblem&) { return std::size_t{0}; };
  s.kernel.launch = [plugin](const AttnProblem& p, const kernels::DeviceTensors& t, void*, kernels::Stream stream) {
    const fp_tensors_v1 c{t.q, t.k, t.v, t.o, t.lse, t.seqlens_k, t.alibi_slopes, static_cast<void*>(stream)};
    plugin.launch(p, c);
  };
  s.family = "plugin";
  s.kind = "plugin";
  s.ref = path;
  s.dev = dev;
  Domain& d = s.domain;
  d.head_dims = {64, 80, 96, 128, 256};
  d.any_head_dim = true;
  d.dv_differs = true;
  d.dtypes = {DType::f16, DType::bf16, DType::f32};
  d.long_row_odds = 10;
  d.tensor_layouts = true;
  const KernelInfo k = s.kernel;
  d.supports = [k, dev](const AttnProblem& p) { return static_cast<bool>(k.supports(dev, p)); };
  restrict_dtypes(d, dtype);
  use_device_runner(s);
  return s;
}

}  // namespace flashprobe::gate
