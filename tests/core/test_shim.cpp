// The vendor shim on a real GPU: a kernel round trip through the shim's intrinsics, a planted
// out-of-bounds write caught by the guard bands, and launch errors surfacing as GpuError.
#include "../common/gpu_skip.h"

#include <cmath>
#include <numeric>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/vendor.h"
#include "shim_kernels.h"
#include "flashprobe/core/device_info.h"

using namespace flashprobe;


TEST(Shim, KernelRoundTripThroughTheShim) {
  FP_SKIP_WITHOUT_GPU();
  const int n = 1000;
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), 1.0f);
  DeviceBuffer in(n * sizeof(float)), out(n * sizeof(float));
  in.upload(host);
  launch_round_trip(in.as<float>(), out.as<float>(), n);
  FP_CHECK_LAUNCH("round_trip");
  FP_CHECK(fp_rt::device_synchronize());
  const auto got = out.download_as<float>();
  const int w = require_device().wave_size;
  const float lanes = static_cast<float>(w * (w - 1) / 2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], host[i] * 2 + lanes) << i;
  EXPECT_FALSE(out.guard_damage());
}

TEST(Shim, PoisonIsNaNInEveryFloatType) {
  FP_SKIP_WITHOUT_GPU();
  DeviceBuffer b(64);
  b.poison();
  for (float f : b.download_as<float>()) EXPECT_TRUE(std::isnan(f));
}

TEST(Shim, GuardBandsCatchAPlantedOutOfBoundsWrite) {
  FP_SKIP_WITHOUT_GPU();
  DeviceBuffer b(256 * sizeof(float));
  launch_write_at(b.as<float>(), 255, 1.0f);  // last element: in bounds
  FP_CHECK_LAUNCH("write_at");
  FP_CHECK(fp_rt::device_synchronize());
  EXPECT_FALSE(b.guard_damage());
  launch_write_at(b.as<float>(), 256 + 3, 1.0f);  // 3 floats past the end
  FP_CHECK_LAUNCH("write_at");
  FP_CHECK(fp_rt::device_synchronize());
  auto d = b.guard_damage();
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->before);
  EXPECT_EQ(d->offset, 12u);
  launch_write_at(b.as<float>(), -1, 1.0f);  // one float before the start
  FP_CHECK(fp_rt::device_synchronize());
  auto u = b.guard_damage();
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->before);
  EXPECT_EQ(u->offset, 0u);
}

TEST(Shim, BadLaunchRaisesGpuErrorNamingTheCall) {
  FP_SKIP_WITHOUT_GPU();
  DeviceBuffer b(4);
  launch_write_at(b.as<float>(), 0, 1.0f, 4096);  // more threads per block than any GPU allows
  try {
    FP_CHECK_LAUNCH("write_at");
    FAIL() << "an invalid launch configuration was not reported";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("get_last_error"), std::string::npos) << e.what();
  }
}

TEST(Shim, DeviceInfoNamesTheArchitecture) {
  FP_SKIP_WITHOUT_GPU();
  const auto d = require_device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(d.arch.rfind("sm_", 0) == 0 || d.arch.rfind("gfx", 0) == 0) << d.arch;
  EXPECT_TRUE(d.wave_size == 32 || d.wave_size == 64);
  EXPECT_GT(d.multiprocessors, 0);
}
