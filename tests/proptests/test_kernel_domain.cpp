// The gate's device check and verdict rule on the CPU: every kernel is asked about a device with a
// problem of its own domain (decode was asked with sq = 128, which it refuses by design, and its
// nine properties were skipped on the H100 as if the device could not run them), a refusal counts
// only when the kernel refuses its whole domain there, and zero cases run is a failure.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "flashprobe/kernels/mutants.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/proptests/generators.h"
#include "gate_verdict.h"
#include "kernel_domain.h"

using namespace flashprobe;
using namespace flashprobe::proptests;

namespace {

DeviceInfo device(const std::string& vendor, const std::string& arch, int number, int wave) {
  DeviceInfo d;
  d.index = 0;
  d.name = "fabricated " + arch;
  d.vendor = vendor;
  d.arch = arch;
  d.arch_number = number;
  d.wave_size = wave;
  d.multiprocessors = 132;
  d.global_mem_bytes = 80LL << 30;
  d.smem_per_block = 48 << 10;
  d.smem_per_block_optin = 227 << 10;
  d.smem_per_multiprocessor = 228 << 10;
  return d;
}
DeviceInfo h100() { return device("nvidia", "sm_90", 90, 32); }
std::vector<DeviceInfo> devices() {
  return {device("nvidia", "sm_80", 80, 32), h100(), device("amd", "gfx1100", 0, 32), device("amd", "gfx90a", 0, 64),
          device("amd", "gfx942", 0, 64)};
}

}  // namespace

TEST(KernelDomain, ProbeProblemIsThePlainestProblemOfTheDomain) {
  Domain d;
  d.max_sq = 8;
  d.head_dims = {80, 64};
  d.dtypes = {DType::bf16};
  const AttnProblem p = probe_problem(d);
  EXPECT_EQ(p.sq, 8);
  EXPECT_EQ(p.sk, 128);
  EXPECT_EQ(p.d, 80);
  EXPECT_EQ(p.dv, 80);
  EXPECT_EQ(p.dtype, DType::bf16);
  EXPECT_EQ(p.batch * p.hq * p.hkv, 1);
  EXPECT_EQ(p.causal, Causal::none);
  EXPECT_FALSE(has_errors(validate(p)));
  d.head_dims.clear();
  EXPECT_THROW(probe_problem(d), UsageError);
}

// The bug of issue 22: decode refused the device check's 128-row problem, so its own suite skipped
// on every GPU. Asked with its own domain's problem, decode runs on the H100.
TEST(KernelDomain, DecodeIsAskedWithAProblemItTakes) {
  const kernels::KernelInfo* dec = kernels::find_kernel("decode");
  ASSERT_NE(dec, nullptr);
  const Domain d = kernel_domain(*dec, h100());
  EXPECT_LE(d.max_sq, kernels::kDecodeMaxSq);
  EXPECT_TRUE(static_cast<bool>(dec->supports(h100(), probe_problem(d)))) << dec->supports(h100(), probe_problem(d)).reason;
  EXPECT_EQ(device_refusal(*dec, h100()), "");
}

// On every device, every kernel (and every mutant, which the mutation run asks the same way) either
// takes its probe problem or refuses its whole domain there; device_refusal throws otherwise.
TEST(KernelDomain, ARefusalIsAboutTheDeviceForEveryKernelAndMutant) {
  std::vector<const kernels::KernelInfo*> all;
  for (const auto& k : kernels::kernels()) all.push_back(&k);
  for (const auto& m : kernels::mutants()) all.push_back(&m.kernel);
  for (const DeviceInfo& dev : devices())
    for (const kernels::KernelInfo* k : all) {
      std::string why;
      EXPECT_NO_THROW(why = device_refusal(*k, dev)) << k->name << " on " << dev.arch;
      if (dev.arch == "sm_90" && k->name != "wgmma") {
        EXPECT_EQ(why, "") << k->name << " must run on the H100";
      }
      if (dev.arch == "sm_80" && k->name == "wgmma") {
        EXPECT_NE(why.find("sm_90"), std::string::npos) << why;
      }
    }
}

// A kernel that refuses its probe for what the probe is (here: exactly 128 query rows) but takes
// other problems of its domain is a broken device check, not a skip.
TEST(KernelDomain, AProbeRefusedForWhatItIsIsAnErrorNotASkip) {
  kernels::KernelInfo fake = *kernels::find_kernel("tiled");
  fake.name = "fake";
  fake.supports = [](const DeviceInfo&, const AttnProblem& p) {
    return p.sq == 128 ? kernels::Support::no("sq=128: refused") : kernels::Support::yes();
  };
  try {
    (void)device_refusal(fake, h100());
    FAIL() << "a probe refused for its shape must not read as a device refusal";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("sq=128: refused"), std::string::npos) << e.what();
  }
  fake.supports = [](const DeviceInfo& dev, const AttnProblem&) {
    return dev.arch == "sm_90" ? kernels::Support::no("arch=sm_90: not built for it") : kernels::Support::yes();
  };
  EXPECT_EQ(device_refusal(fake, h100()), "arch=sm_90: not built for it");
}

TEST(GateVerdict, ASkipIsADeviceRefusalAndZeroCasesIsAFailure) {
  EXPECT_EQ(gate_verdict("", "", 150).status, GateStatus::passed);
  const GateVerdict zero = gate_verdict("", "", 0);
  EXPECT_EQ(zero.status, GateStatus::failed);
  EXPECT_NE(zero.why.find("zero cases"), std::string::npos);
  EXPECT_EQ(gate_verdict("", "Falsifiable after 3 tests", 2).status, GateStatus::failed);
  const GateVerdict skip = gate_verdict("arch=sm_80: wgmma exists on sm_90 only", "", 0);
  EXPECT_EQ(skip.status, GateStatus::skipped);
  EXPECT_NE(skip.why.find("sm_90"), std::string::npos);
  EXPECT_EQ(gate_status_name(GateStatus::skipped), "skipped");
  EXPECT_EQ(gate_status_name(GateStatus::failed), "failed");
  EXPECT_EQ(gate_status_name(GateStatus::passed), "passed");
}

