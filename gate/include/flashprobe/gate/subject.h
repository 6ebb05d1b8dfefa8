#pragma once
// What the gate runs its properties on: a subject is a kernel as the properties see it - its name,
// supports() and launch (a KernelInfo), the device it runs on, the generator domain drawn for it, and
// the runner that runs one problem with every check (guard bands, poisoned outputs, inputs unchanged).
// Three kinds, one interface:
//   builtin_subject  a kernel of this build's registry (or a variant, variants.h), run by run_kernel;
//   plugin_subject   any kernel behind the plug-in C ABI (plugin/), adapted to a KernelInfo whose
//                    supports() asks the plug-in and whose launch() hands it the device pointers;
//   a test's host stand-in (tests/gate/host_subject.h): its runner computes on the CPU, so the engine
//                    and `flashprobe gate` are tested without a GPU.
//
// Example:
//   const DeviceInfo dev = require_device();
//   Subject s = plugin_subject(Plugin::load("./libmykernel.so"), dev, "path", "f16");
//   Outcome o = run_property(s, "AgreesWithOracle", options);   // engine.h
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/device_memory.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"
#include "flashprobe/plugin/loader.h"
#include "flashprobe/proptests/cases.h"

namespace flashprobe::gate {

using proptests::Case;
using proptests::Domain;

// Runs kernel k (the subject's, a split variant of it, or its decoder) on one problem with every
// runner check (kernels::run_kernel for device subjects).
using Runner = std::function<kernels::RunResult(const kernels::KernelInfo& k, const AttnProblem& p, const AttnInputs& in)>;
// Runs kernel k on a case whose inputs it makes itself (filled on the device in the case arena,
// kernels/case_arena.h): the inputs as the kernel got them, and the run with every runner check.
struct CaseRun {
  AttnInputs in;
  kernels::RunResult run;
};
using CaseRunner = std::function<CaseRun(const kernels::KernelInfo& k, const Case& c)>;

struct Subject {
  kernels::KernelInfo kernel;  // name, supports(dev, p), launch
  // The registry family whose properties apply ("decode" gets SplitsAgree, properties.h); "plugin"
  // and "host" get the general list.
  std::string family;
  // How a replay line names it: {"kernel", "mma"}, {"plugin", "/abs/path/libx.so"}, {"host", "..."}.
  std::string kind, ref;
  DeviceInfo dev;
  Domain domain;  // what the generators draw for it: its supports() as the last word, dtypes restricted
  Runner run;
  // Set where the subject makes a case's inputs and runs it in one go (the case arena): the
  // properties that take the drawn case as it is use it instead of making inputs and calling run.
  CaseRunner run_case;
  // "per-case" (device buffers allocated, guarded, uploaded and freed per run: run_kernel) or "arena"
  // (kept across cases: kernels/case_arena.h); the time ledger records it.
  std::string runner = "per-case";
  // The one-row kernel of DecodeLastRowEqualsPrefill: the registry's decode for built-in kernels;
  // empty for plug-ins and stand-ins, whose own one-row run is compared with their prefill.
  std::optional<kernels::KernelInfo> decoder;
  // Runs on the host (a test's stand-in): properties that need device memory are not exercised.
  bool host = false;
  // The device memory properties hold for a whole run (device_hold.h): null, the GPU runtime's
  // (core/device_memory.h gpu_memory()); a CPU test's stand-in that fails, to test the shortage (a
  // host subject with one is asked for LargeOffsetsAgree as a device subject is, so that its hold is
  // tried).
  std::shared_ptr<DeviceMemory> memory;
  std::string display() const;  // "mma", "plugin naive (/abs/libx.so)"
};

// A kernel of the registry, or a variant of one (kernels::kernel_or_variant). dtype: "" for every
// dtype the kernel takes, else one dtype name. @throws UsageError naming an unknown kernel or dtype.
Subject builtin_subject(const std::string& name, const DeviceInfo& dev, const std::string& dtype);
// The same for a KernelInfo in hand (the mutation suite's mutants), with the family whose domain
// and properties apply (a mutant's production kernel).
Subject builtin_subject(const kernels::KernelInfo& k, const std::string& family, const DeviceInfo& dev,
                        const std::string& dtype);
// A plug-in (loaded) as a subject; path is the replay reference. Its domain is the general one:
// head dims 64, 80, 96, 128, 256 and odd ones, Dv != D, f16, bf16 and f32 (restricted by dtype),
// every feature, its supports() as the last word.
Subject plugin_subject(const Plugin& plugin, const DeviceInfo& dev, const std::string& path, const std::string& dtype);

// The device runner of built-in and plug-in subjects, from $FLASHPROBE_CASE_ARENA: unset, "" or "0" the
// per-case runner (run_kernel), "1" the case arena. @throws UsageError naming any other value.
bool case_arena_from_env();

// The domain's dtypes kept by a dtype name ("" keeps all). @throws UsageError naming a value that is
// not a dtype and the allowed names.
void restrict_dtypes(Domain& d, const std::string& dtype);

}  // namespace flashprobe::gate
