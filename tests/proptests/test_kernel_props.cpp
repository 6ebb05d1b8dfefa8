// The property gate: every registered kernel x every property, each run by the gate's engine
// (gate/engine.h, the same runs as `flashprobe gate --kernel K --property P`) under GoogleTest (one
// invariant per test: Kernels/KernelProps.Holds/<kernel>_<property>). Budgets come from the
// environment (FLASHPROBE_PROP_CASES / _MAX_SIZE / _SEED, or RC_PARAMS), so the same binary is a
// 2-minute gate and an hour-long soak; FLASHPROBE_PROP_DTYPE runs one dtype (a soak's per-dtype
// counts; scripts/gpu/soak); FLASHPROBE_CASE_ARENA=1 runs the cases on the case arena (gate/subject.h,
// kernels/case_arena.h) instead of the per-case runner. A failure prints the shrunk case (its id and
// JSON), the `flashprobe gate --replay` line and RapidCheck's RC_PARAMS="reproduce=..." line. Each test prints
// "cases K/P: N run, <status>". Skips only without a GPU, when the kernel refuses this device (its
// whole domain: wgmma off sm_90) or the property needs more of it, or when it takes no
// FLASHPROBE_PROP_DTYPE inputs; a property not exercised otherwise fails (gate_verdict.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <iostream>

#include "../common/gpu_skip.h"
#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/gate/time_ledger.h"
#include "flashprobe/proptests/generators.h"

namespace flashprobe::gate {
namespace {

struct Budget : ::testing::Environment {
  void SetUp() override { proptests::apply_budget_from_env(); }
};
const auto* const kBudget = ::testing::AddGlobalTestEnvironment(new Budget);

using Param = std::tuple<std::string, std::string>;  // kernel, property

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (const char* k : {"ref3pass", "tiled", "decode", "mma", "wgmma"})
    for (const auto& p : properties_for(k)) v.emplace_back(k, p.name);
  return v;
}

class KernelProps : public ::testing::TestWithParam<Param> {};

TEST_P(KernelProps, Holds) {
  FP_SKIP_WITHOUT_GPU();
  const auto& [kname, pname] = GetParam();
  const DeviceInfo dev = require_device();
  const char* dtype = std::getenv("FLASHPROBE_PROP_DTYPE");
  const Subject s = builtin_subject(kname, dev, dtype ? dtype : "");
  // RapidCheck's configuration: RC_PARAMS, which apply_budget_from_env set from FLASHPROBE_PROP_*;
  // a reproduce string of RC_PARAMS names this test's id.
  const auto& cfg = rc::detail::configuration();
  RunOptions o;
  o.cases = cfg.testParams.maxSuccess;
  o.max_size = cfg.testParams.maxSize;
  o.seed = cfg.testParams.seed;
  o.dtype = dtype ? dtype : "";
  o.test_id = "Kernels/KernelProps.Holds/" + kname + "_" + pname;
  o.reproduce = rc_params_reproduce(o.test_id);
  const Outcome r = run_property(s, pname, o);
  // A skip is only the device's or the dtype's; any other property not exercised fails.
  const bool skip = r.verdict.status == GateStatus::not_exercised &&
                    (r.verdict.cause == Unexercised::device || r.verdict.cause == Unexercised::dtype);
  std::cout << r.message << "\ncases " << kname << "/" << pname << ": " << r.facts.cases_run << " run, "
            << (skip ? "skipped" : r.verdict.status == GateStatus::passed ? "passed" : "failed") << std::endl;
  if (skip) GTEST_SKIP() << kname << " " << r.verdict.why;
  if (r.verdict.status != GateStatus::passed)
    FAIL() << r.verdict.why << (r.counterexample.is_null() ? "" : "\nshrunk case: " + r.counterexample.dump())
           << (r.replay.empty() ? "" : "\nreproduce: " + r.replay + "\nor: RC_PARAMS=\"reproduce=" + r.reproduce +
                                           "\" test_kernel_props --gtest_filter=" + o.test_id);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelProps, ::testing::ValuesIn(all_params()),
                         [](const auto& i) { return std::get<0>(i.param) + "_" + std::get<1>(i.param); });

}  // namespace
}  // namespace flashprobe::gate
