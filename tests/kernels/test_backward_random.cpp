// The random backward problems (tests/common/backward_random.h) on the CPU: a one-kernel draw stays
// in the kernel's domain, and seed 1's first 100 problems are the ones test_backward_gpu drew on the
// H100 (its record counted 41 in the tensor-core kernels' domain), so that backward_draws can recount
// a soak's problems per dtype from its seeds.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "../common/backward_random.h"
#include "flashprobe/gate/stand_in_device.h"
#include "flashprobe/kernels/backward.h"

namespace flashprobe::kernels {
namespace {

// The H100's sizes as its records state them (reports/data/h100-80gb-hbm3/*/backward-random.json:
// 48 KiB per block, 227 KiB opt-in, 228 KiB per SM, 132 SMs), which the backward kernels' supports() read.
const DeviceInfo kH100 = gate::stand_in_h100();

TEST(BackwardRandom, AOneKernelDrawStaysInItsDomain) {
  const BackwardKernelInfo* k = find_backward_kernel("mma_bwd");
  ASSERT_NE(k, nullptr);
  std::mt19937_64 rng(101);
  std::map<DType, int> dtypes;
  for (int c = 0; c < 300; ++c) {
    const testing::BackwardDraw d = testing::next_backward_draw(rng, kH100, k);
    ASSERT_TRUE(k->supports(kH100, d.p)) << d.p.id();
    ++dtypes[d.p.dtype];
  }
  EXPECT_EQ(dtypes.count(DType::f32), 0u);
  EXPECT_GT(dtypes[DType::f16], 100);  // about half each
  EXPECT_GT(dtypes[DType::bf16], 100);
}

TEST(BackwardRandom, SeedOneDrawsWhatTheH100Ran) {
  // 2026-11-26-gate-ada6362/backward-random.json: 100 problems, seed 1; mma_bwd: 41 run, 59 skipped;
  // tiled_bwd: 100 run, 0 skipped. Every kernel is asked, none redraws.
  std::mt19937_64 rng(1);
  int mma = 0, tiled = 0;
  for (int c = 0; c < 100; ++c) {
    const testing::BackwardDraw d = testing::next_backward_draw(rng, kH100, nullptr);
    mma += static_cast<bool>(find_backward_kernel("mma_bwd")->supports(kH100, d.p));
    tiled += static_cast<bool>(find_backward_kernel("tiled_bwd")->supports(kH100, d.p));
  }
  EXPECT_EQ(mma, 41);
  EXPECT_EQ(tiled, 100);
}

}  // namespace
}  // namespace flashprobe::kernels
