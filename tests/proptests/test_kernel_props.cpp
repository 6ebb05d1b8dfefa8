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
// FLASHPROBE_PROP_VARIANTS="mma/classes=coarse ..." (variants.h) adds each named variant x every
// property of its kernel as Variants/KernelProps.Holds/<name, other characters than letters and
// digits as _>_<property> (a variant's soak, scripts/gpu/soak); an unknown name exits 2.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "../common/gpu_skip.h"
#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/gate/time_ledger.h"
#include "flashprobe/kernels/variants.h"
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

// The variants named in FLASHPROBE_PROP_VARIANTS (white-space separated), each with its kernel's properties.
std::vector<Param> variant_params() {
  std::vector<Param> v;
  const char* env = std::getenv("FLASHPROBE_PROP_VARIANTS");
  std::istringstream names(env ? env : "");
  for (std::string n; names >> n;) {
    try {
      (void)kernels::find_variant(n);
    } catch (const std::exception& e) {
      std::cerr << "test_kernel_props: FLASHPROBE_PROP_VARIANTS: " << e.what() << std::endl;
      std::exit(2);
    }
    for (const auto& p : properties_for(n.substr(0, n.find('/')))) v.emplace_back(n, p.name);
  }
  return v;
}

// GoogleTest's name of a (kernel or variant, property): "mma/classes=coarse" -> "mma_classes_coarse_<property>".
std::string param_name(const ::testing::TestParamInfo<Param>& i) {
  std::string k = std::get<0>(i.param);
  for (char& c : k)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return k + "_" + std::get<1>(i.param);
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
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  o.test_id = std::string(t->test_suite_name()) + "." + t->name();
  const bool variant = kname.find('/') != std::string::npos;
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
           << (r.replay.empty() ? "" : "\nreproduce: " + r.replay + "\nor: RC_PARAMS=\"reproduce=" + r.reproduce + "\" " +
                                           (variant ? "FLASHPROBE_PROP_VARIANTS=" + kname + " " : "") +
                                           "test_kernel_props --gtest_filter=" + o.test_id);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelProps, ::testing::ValuesIn(all_params()), param_name);
INSTANTIATE_TEST_SUITE_P(Variants, KernelProps, ::testing::ValuesIn(variant_params()), param_name);

}  // namespace
}  // namespace flashprobe::gate
