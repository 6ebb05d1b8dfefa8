// Host-side contracts of the NVIDIA executors that need no GPU: the wrong-arch refusal for wgmma
// and the exact-value guard on experiment inputs.
#include <gtest/gtest.h>

#include "../../probes/nvidia/exact.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/probes/nvidia/executors.h"

using namespace flashprobe;
using namespace flashprobe::nvidia;

namespace {

// Wrong-arch use is loud: below sm_90 (and above: sm_100 has no wgmma) the host check refuses
// with a message naming the device; on sm_90 it accepts. Pure host logic, checked on every device.
TEST(WgmmaArch, HostCheckRefusesEveryArchButSm90) {
  DeviceInfo dev;
  dev.vendor = "nvidia";
  dev.name = "test device";
  for (int arch : {75, 80, 86, 89, 90, 100, 120}) {
    dev.arch_number = arch;
    dev.arch = "sm_" + std::to_string(arch);
    if (arch == 90) {
      EXPECT_NO_THROW(require_wgmma(dev, "SM90_64x8x16_F32F16F16_RS"));
    } else {
      try {
        require_wgmma(dev, "SM90_64x8x16_F32F16F16_RS");
        ADD_FAILURE() << "sm_" << arch << " accepted";
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(dev.arch), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("SM90_64x8x16_F32F16F16_RS"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(ExactGuard, RejectsTheFirstValueTheElementTypeWouldRound) {
  const std::vector<float> ok_f16{0, 1, -2048, 2048, 0.5f};
  EXPECT_NO_THROW(require_exact(ExactKind::f16, ok_f16, "A"));
  const std::vector<float> bad_f16{1, 2049, 3};  // 2049 rounds to 2048 in f16
  try {
    require_exact(ExactKind::f16, bad_f16, "A");
    ADD_FAILURE() << "2049 accepted as f16";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("A[1]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(require_exact(ExactKind::bf16, std::vector<float>{257}, "B"), UsageError);  // bf16: 8 bits
  EXPECT_NO_THROW(require_exact(ExactKind::bf16, std::vector<float>{256, -3}, "B"));
  EXPECT_THROW(require_exact(ExactKind::s8, std::vector<float>{128}, "A"), UsageError);
  EXPECT_THROW(require_exact(ExactKind::s8, std::vector<float>{0.5f}, "A"), UsageError);
  EXPECT_NO_THROW(require_exact(ExactKind::s8, std::vector<float>{-128, 127}, "A"));
}

}  // namespace
