// mma_bwd_amd's domain, refusals and launch plan (host code; the kernels run in the emulator,
// emulator/amdemu/backward.py, and on an AMD GPU in test_backward_gpu).
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/backward.h"
#include "src/bwd_params.h"
#include "src/mma/mma_bwd_amd_plan.h"
#include "../common/backward_features.h"

namespace flashprobe::kernels {
namespace {

DeviceInfo amd(const std::string& arch, int wave) {
  DeviceInfo d;
  d.vendor = "amd";
  d.arch = arch;
  d.wave_size = wave;
  return d;
}

AttnProblem prob(int d, DType t = DType::f16) {
  AttnProblem p;
  p.batch = 2; p.hq = 6; p.hkv = 2; p.sq = 33; p.sk = 70; p.d = p.dv = d;
  p.dtype = p.out_dtype = t;
  return p;
}

// Every feature of AttnProblem at f16/bf16 and d = dv in {64, 128} on gfx11, gfx12 and CDNA.
TEST(MmaBwdAmd, DomainAndRefusals) {
  const BackwardKernelInfo* k = find_backward_kernel("mma_bwd_amd");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->deterministic);
  EXPECT_EQ(k->workspace_bytes(prob(64)), backward_workspace_bytes(prob(64), true));
  for (const DeviceInfo& dev : {amd("gfx1100", 32), amd("gfx1201", 32), amd("gfx942:sramecc+:xnack-", 64), amd("gfx90a", 64)})
    for (DType t : {DType::f16, DType::bf16})
      for (int d : {64, 128})
        for (int feature = 0; feature < testing::kBackwardFeatures; ++feature) {
          const AttnProblem p = testing::with_backward_feature(prob(d, t), feature);
          EXPECT_TRUE(k->supports(dev, p)) << dev.arch << " " << p.id() << ": " << k->supports(dev, p).reason;
        }
  const auto refused = [&](const DeviceInfo& dev, const AttnProblem& p, const std::string& says) {
    const Support s = k->supports(dev, p);
    EXPECT_FALSE(s) << dev.arch << " " << p.id();
    EXPECT_NE(s.reason.find(says), std::string::npos) << s.reason;
  };
  const DeviceInfo g11 = amd("gfx1100", 32);
  refused(amd("gfx1030", 32), prob(64), "arch=gfx1030");
  DeviceInfo h100;
  h100.vendor = "nvidia";
  h100.arch = "sm_90";
  refused(h100, prob(64), "arch=sm_90");
  refused(amd("gfx908", 64), prob(64, DType::bf16), "dtype=bf16 on gfx908");
  for (int d : {32, 80, 96, 256}) refused(g11, prob(d), "d=" + std::to_string(d));
  AttnProblem p = prob(64);
  p.dv = 32;
  refused(g11, p, "dv=32");
  refused(g11, prob(64, DType::f32), "dtype=f32");
  p = prob(64);
  p.out_dtype = DType::f32;
  refused(g11, p, "out_dtype=f32");
  p = prob(64);
  p.hkv = 1;
  p.hq = 70000;
  refused(g11, p, "grid");
}

// The emulator's launch numbers: 64-key dK/dV blocks and 64-row dQ blocks, the atom of the family and
// dtype, and every pointer of BwdParams at the offset the plan names.
TEST(MmaBwdAmd, PlanGridsAtomsAndPointerOffsets) {
  AttnProblem p = prob(128, DType::bf16);
  p.sq = 130;
  const AmdBwdPlan g11 = amd_bwd_plan(p, "gfx11");
  EXPECT_EQ(g11.atom, "GFX11_WMMA_16x16x16_F32BF16_W32");
  EXPECT_EQ(g11.elem, "BF16");
  EXPECT_EQ(g11.tile, 32);
  EXPECT_EQ(g11.waves, 4);
  EXPECT_EQ(g11.threads, 128);
  EXPECT_EQ(g11.grid_rowdot, (std::array<unsigned, 3>{(2 * 6 * 130 + 127) / 128, 1, 1}));
  EXPECT_EQ(g11.grid_dkdv, (std::array<unsigned, 3>{2, 2, 2}));  // 70 keys, 2 kv heads, 2 batches
  EXPECT_EQ(g11.grid_dq, (std::array<unsigned, 3>{3, 6, 2}));    // 130 rows, 6 heads
  const AmdBwdPlan cdna = amd_bwd_plan(prob(64), "cdna");
  EXPECT_EQ(cdna.atom, "CDNA_MFMA_32x32x8_F32F16");
  EXPECT_EQ(cdna.waves, 2);
  EXPECT_EQ(cdna.wave_size, 64);
  EXPECT_EQ(cdna.threads, 128);
  EXPECT_EQ(cdna.tile, 64);
  EXPECT_EQ(amd_bwd_plan(prob(64), "gfx12").atom, "GFX12_WMMA_16x16x16_F32F16_W32");
  // Each pointer field holds a distinct placeholder, and the offsets find them.
  std::set<std::uintptr_t> seen;
  for (std::size_t i = 0; i < g11.pointer_offsets.size(); ++i) {
    if (i == 5 || i == 6) continue;  // alibi, seqlens: null without those features
    std::uintptr_t v = 0;
    std::memcpy(&v, reinterpret_cast<const char*>(&g11.params) + g11.pointer_offsets[i], sizeof v);
    EXPECT_NE(v, 0u) << i;
    EXPECT_TRUE(seen.insert(v).second) << i;
  }
  EXPECT_EQ(g11.params.dq_acc, nullptr);  // deterministic: no atomic workspace
  EXPECT_THROW(amd_bwd_plan(prob(96), "gfx11"), UsageError);
  EXPECT_THROW(amd_bwd_plan(prob(64), "sm80"), UsageError);
  p = prob(64);
  p.dv = 32;
  EXPECT_THROW(amd_bwd_plan(p, "gfx11"), UsageError);
}

}  // namespace
}  // namespace flashprobe::kernels
