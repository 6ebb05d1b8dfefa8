// The property gate: every registered kernel x every property, each a RapidCheck property
// run under GoogleTest (one invariant per test: Kernels/KernelProps.Holds/<kernel>_<property>).
// Budgets come from the environment (FLASHPROBE_PROP_CASES / _MAX_SIZE / _SEED, or RC_PARAMS), so the
// same binary is a 2-minute gate and an hour-long soak; FLASHPROBE_PROP_DTYPE runs one dtype (a soak's
// per-dtype counts; scripts/gpu/soak). A failure prints the shrunk case (its id and
// JSON) and RapidCheck's RC_PARAMS="reproduce=..." line. Skips without a GPU.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>

#include "../common/gpu_skip.h"
#include "../common/kernel_device.h"
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
  // A kernel of one architecture (wgmma: sm_90) refuses everything elsewhere: skip, saying why.
  if (const std::string why = flashprobe::testing::refusal_on_device(*k, dev); !why.empty())
    GTEST_SKIP() << kname << " refuses this device: " << why;
  if (domain_for(*k, dev).dtypes.empty())
    GTEST_SKIP() << kname << " takes no " << std::getenv("FLASHPROBE_PROP_DTYPE") << " inputs (FLASHPROBE_PROP_DTYPE)";
  for (const auto& p : properties_for(kname)) {
    if (p.name != pname) continue;
    progress_start(kname + "/" + pname, 0);
    ledger_start(kname, pname);
    rc::detail::checkGTest([&] {
      progress_case();
      ledger_case();
      p.run(*k, dev);
    });
    ledger_end();
    progress_end();
    return;
  }
  FAIL() << "no property " << pname;
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelProps, ::testing::ValuesIn(all_params()),
                         [](const auto& i) { return std::get<0>(i.param) + "_" + std::get<1>(i.param); });

}  // namespace
}  // namespace flashprobe::proptests
