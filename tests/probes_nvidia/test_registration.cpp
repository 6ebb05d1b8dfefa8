// The cuda tree's glue between the NVIDIA device code and the probe engine, checked without a GPU:
// every NVIDIA atom of the registry has a hardware executor (the registration is linked in and
// runs), wmma atoms have memory paths, and the wgmma B staging the executor applies is exactly the
// one the registry declares as B's "layout".
#include <gtest/gtest.h>

#include "../../probes/nvidia/nvidia_atoms.h"
#include "flashprobe/probes/executor.h"
#include "flashprobe/probes/hardware_probe.h"
#include "flashprobe/probes/load_path.h"

namespace pr = flashprobe::probes;

TEST(NvidiaRegistration, EveryNvidiaAtomHasAHardwareExecutor) {
  int mma = 0, load = 0, wmma = 0;
  for (const auto& a : pr::mma_atoms()) {
    if (a.vendor != pr::Vendor::nvidia) {
      EXPECT_FALSE(pr::has_hardware_executor(a.name)) << a.name << " is not an NVIDIA atom";
      continue;
    }
    EXPECT_TRUE(pr::has_hardware_executor(a.name)) << a.name;
    const bool is_wmma = a.name.rfind("SM80_WMMA_", 0) == 0;
    EXPECT_EQ(pr::has_memory_paths(a.name), is_wmma) << a.name;
    wmma += is_wmma;
    ++mma;
  }
  for (const auto& a : pr::load_atoms())
    if (a.vendor == pr::Vendor::nvidia) {
      EXPECT_TRUE(pr::has_hardware_load_executor(a.name)) << a.name;
      ++load;
    }
  EXPECT_EQ(mma, 4 + 24 + 5);  // mma.sync, wmma, wgmma
  EXPECT_EQ(wmma, 24);
  EXPECT_EQ(load, 6);  // ldmatrix x1/x2/x4, plain and .trans
}

TEST(NvidiaRegistration, WgmmaBStagingIsTheRegistrysDeclaredBLayout) {
  for (int n : flashprobe::nvidia::kWgmmaN) {
    const auto* a = pr::find_mma_atom("SM90_64x" + std::to_string(n) + "x16_F32F16F16_RS");
    ASSERT_TRUE(a && a->expected) << n;
    const auto& b = a->expected->b;
    std::vector<double> staged(static_cast<std::size_t>(b.size()));
    for (int i = 0; i < b.size(); ++i) staged[static_cast<std::size_t>(i)] = i + 1;  // names its (lane, slot)
    std::vector<float> logical(static_cast<std::size_t>(16 * n), 0.0f);
    flashprobe::nvidia::detail::wgmma_b_logical(staged.data(), n, logical.data());
    for (int i = 0; i < b.size(); ++i) {
      const pr::Coord c = b.at_flat(i);
      ASSERT_EQ(logical[static_cast<std::size_t>(c.row * n + c.col)], i + 1)
          << "N=" << n << " lane " << i / b.slots() << " slot " << i % b.slots();
    }
  }
}

TEST(NvidiaRegistration, WrongArchIsDecidedFromTheAtomsTargets) {
  flashprobe::DeviceInfo a100;
  a100.name = "A100";
  a100.vendor = "nvidia";
  a100.arch = "sm_80";
  a100.arch_number = 80;
  auto h100 = a100;
  h100.arch = "sm_90";
  h100.arch_number = 90;
  auto b200 = a100;
  b200.arch = "sm_100";
  b200.arch_number = 100;
  std::string why;
  const auto* wgmma = pr::find_mma_atom("SM90_64x64x16_F32F16F16_RS");
  const auto* mma = pr::find_mma_atom("SM80_16x8x16_F32F16F16F32_TN");
  ASSERT_TRUE(wgmma && mma);
  EXPECT_FALSE(pr::runs_on(wgmma->targets, a100, why));
  EXPECT_NE(why.find("sm_90a"), std::string::npos) << why;
  EXPECT_TRUE(pr::runs_on(wgmma->targets, h100, why));
  EXPECT_FALSE(pr::runs_on(wgmma->targets, b200, why));  // sm_90a code does not run on sm_100
  EXPECT_TRUE(pr::runs_on(mma->targets, a100, why));
  EXPECT_TRUE(pr::runs_on(mma->targets, b200, why));
  EXPECT_FALSE(pr::runs_on(pr::find_mma_atom("GFX11_WMMA_16x16x16_F32F16_W32")->targets, h100, why));
}
