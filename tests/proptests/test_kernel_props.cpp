// The property gate: every registered kernel x every property, each a RapidCheck property
// run under GoogleTest (one invariant per test: Kernels/KernelProps.Holds/<kernel>_<property>).
// Budgets come from the environment (FLASHPROBE_PROP_CASES / _MAX_SIZE / _SEED, or RC_PARAMS), so the
// same binary is a 2-minute gate and an hour-long soak; FLASHPROBE_PROP_DTYPE runs one dtype (a soak's
// per-dtype counts; scripts/gpu/soak). A failure prints the shrunk case (its id and
// JSON) and RapidCheck's RC_PARAMS="reproduce=..." line. Each test prints "cases K/P: N run, <status>".
// Skips only without a GPU or when the kernel refuses this device (its whole domain: wgmma off sm_90);
// a kernel that runs here and ran zero cases of a property fails (gate_verdict.h).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "../common/gpu_skip.h"
#include "../common/kernel_device.h"
#include "gate_verdict.h"
#include "kernel_props.h"
#include "progress.h"
#include "time_ledger.h"

namespace flashprobe::proptests {
namespace {

struct Budget : ::testing::Environment {
  void SetUp() override { apply_budget_from_env(); }
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
  const kernels::KernelInfo* k = kernels::find_kernel(kname);
  ASSERT_NE(k, nullptr) << kname;
  const DeviceInfo dev = require_device();
  // A kernel of one architecture (wgmma: sm_90) refuses its whole domain elsewhere: skip, saying why.
  // The question is asked with a problem of the kernel's own domain (decode: sq <= 8).
  if (const std::string why = flashprobe::testing::refusal_on_device(*k, dev); !why.empty()) {
    const GateVerdict v = gate_verdict(why, "", 0);
    ledger_skip(kname, pname, v.why);
    GTEST_SKIP() << kname << " " << v.why;
  }
  // A property that needs more of the device than it has (LargeOffsetsAgree: memory) skips, naming it.
  if (const std::string why = property_device_refusal(pname, *k, dev); !why.empty()) {
    const GateVerdict v = gate_verdict(why, "", 0);
    ledger_skip(kname, pname, v.why);
    GTEST_SKIP() << kname << " " << v.why;
  }
  if (domain_for(*k, dev).dtypes.empty()) {
    const std::string why = std::string("takes no ") + std::getenv("FLASHPROBE_PROP_DTYPE") + " inputs (FLASHPROBE_PROP_DTYPE)";
    ledger_skip(kname, pname, why);
    GTEST_SKIP() << kname << " " << why;
  }
  for (const auto& p : properties_for(kname)) {
    if (p.name != pname) continue;
    progress_start(kname + "/" + pname, 0);
    ledger_start(kname, pname);
    rc::detail::TestMetadata md;
    md.id = "Kernels/KernelProps.Holds/" + kname + "_" + pname;
    md.description = kname + "_" + pname;
    const auto result = rc::detail::checkTestable(
        [&] {
          progress_case();
          ledger_case();
          p.run(*k, dev);
        },
        md);
    // What ran: RapidCheck's successes (discarded cases are not counted); its message either way.
    long long ran = 0;
    std::ostringstream msg;
    rc::detail::printResultMessage(result, msg);
    std::string failure;
    if (result.template is<rc::detail::SuccessResult>()) {
      ran = result.template get<rc::detail::SuccessResult>().numSuccess;
    } else {
      failure = msg.str();
      if (result.template is<rc::detail::FailureResult>()) ran = result.template get<rc::detail::FailureResult>().numSuccess;
      if (result.template is<rc::detail::GaveUpResult>()) ran = result.template get<rc::detail::GaveUpResult>().numSuccess;
    }
    const GateVerdict v = gate_verdict("", failure, ran);
    ledger_end(gate_status_name(v.status), ran, v.why);
    progress_end();
    std::cout << msg.str() << "\ncases " << kname << "/" << pname << ": " << ran << " run, " << gate_status_name(v.status) << std::endl;
    if (v.status != GateStatus::passed) FAIL() << v.why;
    return;
  }
  FAIL() << "no property " << pname;
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelProps, ::testing::ValuesIn(all_params()),
                         [](const auto& i) { return std::get<0>(i.param) + "_" + std::get<1>(i.param); });

}  // namespace
}  // namespace flashprobe::proptests
