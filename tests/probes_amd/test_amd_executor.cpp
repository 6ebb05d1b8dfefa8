// The AMD hardware executors as the engine sees them (executor.h): registered for every AMD atom in
// the HIP build, absent elsewhere; without an AMD GPU the factory declines and says why, so
// `flashprobe probe --all` skips instead of failing.
#include <gtest/gtest.h>

#include "flashprobe/core/device_info.h"
#include "flashprobe/probes/amd/run.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/executor.h"

namespace fp = flashprobe::probes;

TEST(AmdExecutor, RegisteredExactlyInTheHipBuild) {
  for (const auto& a : fp::mma_atoms()) {
    if (a.vendor != fp::Vendor::amd) continue;
    EXPECT_EQ(fp::has_hardware_executor(a.name), fp::amd::amd_runtime_built()) << a.name;
  }
}

TEST(AmdExecutor, WithoutAnAmdGpuTheFactoryDeclinesWithTheReason) {
  if (flashprobe::has_device() && fp::amd::amd_runtime_built()) GTEST_SKIP() << "an AMD GPU is present";
  for (const auto& a : fp::mma_atoms()) {
    if (a.vendor != fp::Vendor::amd) continue;
    std::string why;
    EXPECT_EQ(fp::make_hardware_executor(a, why), nullptr) << a.name;
    if (fp::amd::amd_runtime_built())
      EXPECT_NE(why.find("no AMD GPU"), std::string::npos) << a.name << ": " << why;
    else
      EXPECT_NE(why.find("no hardware executor"), std::string::npos) << a.name << ": " << why;
  }
}
