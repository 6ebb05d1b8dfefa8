// flashprobe gate: the property gate as a command, for the kernels of this build and for any kernel
// behind the plug-in ABI, with JUnit XML and the gate record (gate/command.h runs it; this file only
// parses). Exit 0 every property held, 1 a property failed or was not exercised without an
// allowance, 2 bad usage.
//
//   flashprobe gate --plugin ./libmine.so --junit gate.xml
//   flashprobe gate --kernel mma --kernel decode --cases 300 --seed 7 --json gate.json
//   flashprobe gate --replay 'plugin=/abs/libmine.so property=AgreesWithOracle rc=...'
#include <unistd.h>

#include <iostream>

#include "command.h"
#include "flashprobe/gate/command.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::cli {
namespace {

std::string property_list() {
  std::string s;
  for (const auto& p : gate::all_property_names()) s += (s.empty() ? "" : ", ") + p;
  return s;
}

CommandRegistration reg("gate", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand(
      "gate",
      "Property-test kernels against the oracle (built-in kernels and plug-ins), with JUnit XML; exit 0 every property "
      "held, 1 a property failed or was not exercised, 2 bad usage (needs a GPU)");
  auto a = std::make_shared<gate::GateArgs>();
  auto seed = std::make_shared<std::uint64_t>(0);
  auto budget = std::make_shared<double>(0);
  sub->add_option("--kernel", a->kernels, "A kernel of this build (repeatable): " + kernels::kernel_names() + ", or a variant (mma/order=rows)");
  sub->add_option("--plugin", a->plugins, "A kernel behind the plug-in ABI, a shared library exporting flashprobe_plugin_v1 (repeatable)");
  sub->add_option("--property", a->properties, "Run only this property (repeatable; default every one that applies): " + property_list());
  sub->add_option("--cases", a->cases, "Cases per property that must run to the end")->capture_default_str();
  sub->add_option("--max-size", a->max_size, "RapidCheck's largest size (100: the domains' full size)")->capture_default_str();
  auto* seed_opt = sub->add_option("--seed", *seed, "Random seed (default: a random one, printed and recorded)");
  sub->add_option("--dtype", a->dtype, "Draw only this input dtype: f16, bf16 or f32 (default every one a subject takes)");
  auto* budget_opt = sub->add_option("--time-budget", *budget,
                                     "Seconds for the whole gate: no case starts after it (a property left with zero cases is not exercised)");
  sub->add_option("--junit", a->junit, "Write JUnit XML here (one testcase per subject x property)");
  sub->add_option("--json", a->json, "Write the gate record here (schema flashprobe.gate/1; the report reads it)");
  sub->add_option("--replay", a->replay, "Re-run one shrunk failure: the line printed after 'reproduce:' (quoted)");
  sub->add_option("--allow-not-exercised", a->allow_not_exercised,
                  "Accept that this property ran zero cases (supports() refused every problem, ...); repeatable, or 'all'");
  sub->add_flag("--no-progress", [a](std::int64_t) { a->progress = false; }, "No progress line on a terminal");
  sub->footer(
      "A property the gate itself could not run for lack of device memory is reported as such (the allocation, the bytes, "
      "the runtime's free/total; JUnit <error>), never as the kernel failing and never as passed.\n"
      "Environment: FLASHPROBE_GATE_LOCK_DIR (default $TMPDIR, else /tmp) holds the lock file through which gates sharing "
      "a GPU take turns for LargeOffsetsAgree's tensors; FLASHPROBE_GATE_LOCK_WAIT_S (default 120) bounds the wait for "
      "the lock and the memory (gate/README.md).");
  return [a, seed, budget, seed_opt, budget_opt] {
    if (seed_opt->count()) a->seed = *seed;
    if (budget_opt->count()) a->time_budget_s = *budget;
    a->progress = a->progress && isatty(2);
    return gate::run_gate(*a, gate::device_resolver(), std::cout);
  };
});

}  // namespace
}  // namespace flashprobe::cli
