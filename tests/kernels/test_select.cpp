// select() is a pure host function: these tests drive it with fake devices and fake binaries.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/select.h"
#include "flashprobe/kernels/variants.h"

namespace flashprobe::kernels {
namespace {

DeviceInfo device(const std::string& vendor, const std::string& arch, int wave) {
  DeviceInfo d;
  d.index = 0;
  d.name = "fake " + arch;
  d.vendor = vendor;
  d.arch = arch;
  d.wave_size = wave;
  d.global_mem_bytes = 80LL << 30;
  d.smem_per_block = 48 << 10;
  return d;
}
const DeviceInfo kSm80 = device("nvidia", "sm_80", 32), kSm86 = device("nvidia", "sm_86", 32),
                 kSm90 = device("nvidia", "sm_90", 32), kSm75 = device("nvidia", "sm_75", 32),
                 kSm100 = device("nvidia", "sm_100", 32), kGfx1100 = device("amd", "gfx1100", 32),
                 kGfx90a = device("amd", "gfx90a", 64), kNone{};
const BinaryTargets kCuda{"nvidia", {"80", "90"}}, kHip{"amd", {"gfx90a", "gfx940"}}, kOff{};

AttnProblem prob(int sq, int sk, int d, DType t = DType::f16) {
  AttnProblem p;
  p.batch = 2;
  p.hq = 4;
  p.hkv = 2;
  p.sq = sq;
  p.sk = sk;
  p.d = p.dv = d;
  p.dtype = p.out_dtype = t;
  return p;
}

std::string rejection(const Selection& s, const std::string& kernel) {
  for (auto& r : s.rejected)
    if (r.kernel == kernel) return r.reason;
  return "(not rejected)";
}

TEST(Select, DecodeForFewQueryRows) {
  const Selection s = select(kSm90, prob(1, 4096, 128), kCuda, kernels());
  ASSERT_TRUE(s) << s.describe();
  EXPECT_EQ(s.kernel->name, "decode");
  EXPECT_NE(s.reason.find("sq=1"), std::string::npos) << s.reason;
  // The tensor-core path takes the problem too, but one query row is decode's.
  EXPECT_TRUE(kernels().front().supports(kSm90, prob(1, 4096, 128))) << "mma should support sm_90";
}

// By measurement (select.cpp): one query row is decode's at any batch; a few rows go to the tensor
// cores once their blocks fill the device.
TEST(Select, OneQueryRowIsDecodesAndAFewRowsGoToTensorCoresOnceTheirBlocksFillTheDevice) {
  DeviceInfo h100 = kSm90;
  h100.multiprocessors = 132;
  AttnProblem p = prob(1, 32768, 128);
  p.hq = p.hkv = 32;
  for (int batch : {1, 8}) {
    p.batch = batch;
    const Selection s = select(h100, p, kCuda, kernels());
    ASSERT_TRUE(s) << s.describe();
    EXPECT_EQ(s.kernel->name, "decode") << "batch " << batch;
    EXPECT_NE(s.reason.find("one query row"), std::string::npos) << s.reason;
  }
  p.sq = 4;
  p.batch = 1;  // 32 blocks for 132 SMs: decode splits the keys
  const Selection few = select(h100, p, kCuda, kernels());
  ASSERT_TRUE(few) << few.describe();
  EXPECT_EQ(few.kernel->name, "decode");
  EXPECT_NE(few.reason.find("batch*hq=32 blocks under 132 SMs"), std::string::npos) << few.reason;
  // d = 128 on sm_90: the Hopper path where the binary has it (cuda backend), else mma.
#if defined(FLASHPROBE_BACKEND_CUDA)
  const std::string tensor_cores = "wgmma";
#else
  const std::string tensor_cores = "mma";
#endif
  p.batch = 8;  // 256 blocks
  EXPECT_EQ(select(h100, p, kCuda, kernels()).kernel->name, tensor_cores);
  p.sq = kDecodeMaxSq + 1;
  p.batch = 1;
  EXPECT_EQ(select(h100, p, kCuda, kernels()).kernel->name, tensor_cores);
}

TEST(Select, TensorCoresForLongQueriesTiledWhereTheyCannot) {
  const Selection s = select(kSm80, prob(128, 128, 128, DType::bf16), kCuda, kernels());
  ASSERT_TRUE(s) << s.describe();
  EXPECT_EQ(s.kernel->name, "mma");
  // MFMA 32x32x8 tiles O in 32 columns: d = 80 on gfx90a falls to the scalar kernel.
  const Selection d80 = select(kGfx90a, prob(128, 128, 80), kHip, kernels());
  ASSERT_TRUE(d80) << d80.describe();
  EXPECT_EQ(d80.kernel->name, "tiled");
  EXPECT_NE(rejection(d80, "mma").find("d=80"), std::string::npos) << d80.describe();
  EXPECT_NE(rejection(d80, "decode").find("sq=128"), std::string::npos) << d80.describe();
}

TEST(Select, HeadDimOutsideTiledFallsBackWithReason) {
  // d = 72 on gfx90a: mma there is built for d = dv in its classes only, tiled for its own list.
  const Selection s = select(kGfx90a, prob(128, 128, 72), kHip, kernels());
  ASSERT_TRUE(s) << s.describe();
  EXPECT_EQ(s.kernel->name, "ref3pass");
  EXPECT_NE(rejection(s, "tiled").find("d=72"), std::string::npos) << s.describe();
  EXPECT_NE(rejection(s, "mma").find("d=72"), std::string::npos) << s.describe();
  // Not a multiple of 8 (FlashAttention's head dims are): no tensor-core path on sm_90 either.
  const Selection odd = select(kSm90, prob(128, 128, 59), kCuda, kernels());
  ASSERT_TRUE(odd) << odd.describe();
  EXPECT_EQ(odd.kernel->name, "ref3pass");
  EXPECT_NE(rejection(odd, "mma").find("multiples of 8"), std::string::npos) << odd.describe();
  EXPECT_NE(rejection(odd, "wgmma").find("d=59"), std::string::npos) << odd.describe();
  const Support t = find_kernel("tiled")->supports(kSm90, prob(128, 128, 72));
  EXPECT_FALSE(t);
  EXPECT_NE(t.reason.find("d=72"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("{64, 80, 96, 128, 256}"), std::string::npos) << t.reason;
}

TEST(Select, EveryTiledDimIsAccepted) {
  for (int d : kTiledDims) EXPECT_TRUE(find_kernel("tiled")->supports(kSm90, prob(64, 64, d))) << "d=" << d;
  for (int d : {16, 32, 72, 112, 160, 192, 512})
    EXPECT_FALSE(find_kernel("tiled")->supports(kSm90, prob(64, 64, d))) << "d=" << d;
  AttnProblem p = prob(64, 64, 128);
  p.dv = 64;
  const Support s = find_kernel("tiled")->supports(kSm90, p);
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("dv=64"), std::string::npos) << s.reason;
}

// Registry.h's tile classes: a (d, dv) runs in the smallest class at least max(d, dv) wide.
TEST(Select, HeadDimClasses) {
  const auto mma = [](int d, int dv) { return head_dim_class(kMmaDimClasses, d, dv); };
  const auto wg = [](int d, int dv) { return head_dim_class(kWgmmaDimClasses, d, dv); };
  EXPECT_EQ(mma(8, 8), (HeadDimClass{64, 64}));
  EXPECT_EQ(mma(40, 40), (HeadDimClass{64, 64}));
  EXPECT_EQ(mma(64, 64), (HeadDimClass{64, 64}));
  EXPECT_EQ(mma(72, 72), (HeadDimClass{80, 80}));
  EXPECT_EQ(mma(88, 88), (HeadDimClass{96, 96}));
  EXPECT_EQ(mma(104, 104), (HeadDimClass{128, 128}));
  EXPECT_EQ(mma(136, 136), (HeadDimClass{256, 256}));
  EXPECT_EQ(mma(192, 128), (HeadDimClass{256, 256}));
  EXPECT_EQ(mma(64, 128), (HeadDimClass{128, 128}));  // the wider of d and dv
  EXPECT_EQ(wg(72, 40), (HeadDimClass{128, 128}));
  EXPECT_EQ(wg(192, 128), (HeadDimClass{192, 128}));  // MLA's prefill: its own class
  EXPECT_EQ(wg(136, 64), (HeadDimClass{192, 128}));
  EXPECT_EQ(wg(128, 128), (HeadDimClass{128, 128}));  // the first class that takes it
  for (auto [d, dv] : {std::pair{59, 59}, std::pair{64, 60}, std::pair{264, 264}, std::pair{0, 64}, std::pair{-8, 8}})
    EXPECT_FALSE(mma(d, dv)) << d << "/" << dv;
  EXPECT_EQ(wg(136, 136), (HeadDimClass{160, 160}));  // dv past 128: not 192/128
  EXPECT_EQ(wg(160, 128), (HeadDimClass{192, 128}));  // fits both: the one listed first
  EXPECT_EQ(wg(168, 136), (HeadDimClass{256, 256}));
  EXPECT_EQ(wg(128, 192), (HeadDimClass{256, 256}));
  EXPECT_EQ(wg(200, 128), (HeadDimClass{256, 256}));
  EXPECT_EQ(wg(256, 256), (HeadDimClass{256, 256}));
  EXPECT_FALSE(wg(264, 264));
  EXPECT_FALSE(wg(256, 264));
  EXPECT_EQ(class_dv(kWgmmaDimClasses, 192), 128);
  EXPECT_EQ(class_dv(kWgmmaDimClasses, 256), 256);
  EXPECT_EQ(class_dv(kWgmmaDimClasses, 160), 160);
  EXPECT_EQ(class_dv(kWgmmaDimClasses, 96), 0);
}

// wgmma's 160/160 and 256/256 classes measured ahead of mma over their head dims (H100,
// 2026-11-27-wgmma-classes-708f029): on Hopper their problems go to wgmma first, as every other class's,
// and where wgmma runs them the reason names the class and the measurement. The refusal past the list
// names the classes.
TEST(Select, WgmmaClassesPast128GoToWgmmaFirst) {
  // (wgmma's own supports() with its sm_90a code taken as present, so that every build checks the reason)
  std::vector<KernelInfo> table = kernels();
  for (KernelInfo& k : table)
    if (k.name == "wgmma") k.supports = [](const DeviceInfo&, const AttnProblem&) { return Support::yes(); };
  for (auto [d, dv, cls] : {std::tuple{136, 136, "160/160"}, std::tuple{160, 160, "160/160"}, std::tuple{200, 200, "256/256"},
                            std::tuple{256, 256, "256/256"}, std::tuple{128, 192, "256/256"}}) {
    AttnProblem p = prob(4096, 4096, d, DType::bf16);
    p.dv = dv;
    EXPECT_EQ(preference_order(kSm90, p).front(), "wgmma") << d << "/" << dv;
    const Selection s = select(kSm90, p, kCuda, table);
    ASSERT_TRUE(s) << s.describe();
    EXPECT_EQ(s.kernel->name, "wgmma") << s.describe();
    EXPECT_NE(s.reason.find(std::string("wgmma's ") + cls + " class measured 1.4-2.6x mma"), std::string::npos) << s.reason;
  }
  // The classes up to 128 keep their reason without it.
  const Selection s128 = select(kSm90, prob(4096, 4096, 128, DType::bf16), kCuda, table);
  EXPECT_EQ(s128.reason.find("measured 1.4-2.6x"), std::string::npos) << s128.reason;
  for (auto [d, dv] : {std::pair{128, 128}, std::pair{192, 128}, std::pair{160, 128}, std::pair{72, 72}}) {
    AttnProblem p = prob(4096, 4096, d, DType::bf16);
    p.dv = dv;
    EXPECT_EQ(preference_order(kSm90, p).front(), "wgmma") << d << "/" << dv;
  }
  const Support s = find_kernel("wgmma")->supports(kSm90, prob(128, 128, 264));
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("64/64, 128/128, 192/128, 160/160, 256/256"), std::string::npos) << s.reason;
}

// wgmma/classes=fine adds 96/96, 192/192 and 224/224 (compiled; 96/96 timed and refuted); the shipped
// wgmma keeps d = 72..96 in its 128 class and 168..224 in its 256 class, both measured ahead of mma
// there (select() dispatches shipped kernels only).
TEST(Select, WgmmaFineClassesAreTheShippedOnesAnd96And192And224) {
  for (const HeadDimClass& c : kWgmmaDimClasses) EXPECT_EQ(wgmma_class(c.d, c.dv, true), c) << c.d << "/" << c.dv;
  EXPECT_EQ(std::size(kWgmmaFineDimClasses), std::size(kWgmmaDimClasses) + 3);
  for (int d : {168, 176, 184, 192}) {
    EXPECT_EQ(wgmma_class(d, d, true), (HeadDimClass{192, 192})) << d;
    EXPECT_EQ(wgmma_class(d, d, false), (HeadDimClass{256, 256})) << d;
  }
  EXPECT_EQ(wgmma_class(128, 192, true), (HeadDimClass{192, 192}));
  EXPECT_EQ(wgmma_class(192, 136, true), (HeadDimClass{192, 192}));
  EXPECT_EQ(wgmma_class(184, 120, true), (HeadDimClass{192, 128})) << "MLA's class keeps dv <= 128";
  EXPECT_EQ(wgmma_class(160, 160, true), (HeadDimClass{160, 160}));
  EXPECT_EQ(wgmma_class(200, 192, true), (HeadDimClass{224, 224}));
  for (int d : {200, 208, 216, 224}) {
    EXPECT_EQ(wgmma_class(d, d, true), (HeadDimClass{224, 224})) << d;
    EXPECT_EQ(wgmma_class(d, d, false), (HeadDimClass{256, 256})) << d;
  }
  EXPECT_EQ(wgmma_class(232, 232, true), (HeadDimClass{256, 256}));
  for (int d : {72, 80, 88, 96}) {
    EXPECT_EQ(wgmma_class(d, d, true), (HeadDimClass{96, 96})) << d;
    EXPECT_EQ(wgmma_class(d, d, false), (HeadDimClass{128, 128})) << d;
    const Selection s = select(kSm90, prob(4096, 4096, d, DType::bf16), kCuda, kernels());
    ASSERT_TRUE(s) << s.describe();
    if (s.kernel->name == "wgmma") EXPECT_NE(s.reason.find("in the 128/128 tile class"), std::string::npos) << s.reason;
  }
  EXPECT_EQ(wgmma_class(64, 96, true), (HeadDimClass{96, 96}));
  EXPECT_EQ(wgmma_class(96, 104, true), (HeadDimClass{128, 128}));
  const Support f = kernel_or_variant("wgmma/classes=fine").supports(kSm90, prob(128, 128, 264));
  EXPECT_FALSE(f);
  EXPECT_NE(f.reason.find("64/64, 96/96, 128/128, 192/128, 160/160, 192/192, 224/224, 256/256"), std::string::npos) << f.reason;
}

// mma's fine ladder (the one it runs on NVIDIA): every class of kMmaDimClasses is in it, every
// multiple of 8 up to 256 has a class, no wider than kMmaDimClasses', and d = 136..192 a narrower one
// (160 or 192, measured faster there than the 256 class: 2026-11-27-headdim-fb56b67).
TEST(Select, MmaFineLadder) {
  const auto fine = [](int d, int dv) { return head_dim_class(kMmaFineDimClasses, d, dv); };
  for (const HeadDimClass& c : kMmaDimClasses) EXPECT_EQ(fine(c.d, c.dv), c) << c.d;
  EXPECT_EQ(fine(104, 104), (HeadDimClass{128, 128}));
  EXPECT_EQ(fine(120, 120), (HeadDimClass{128, 128}));
  EXPECT_EQ(fine(136, 136), (HeadDimClass{160, 160}));
  EXPECT_EQ(fine(192, 128), (HeadDimClass{192, 192}));  // MLA: its own width on the Q/K side
  EXPECT_EQ(fine(128, 200), (HeadDimClass{256, 256}));  // no 224 class (measured slower than 256)
  EXPECT_EQ(fine(232, 232), (HeadDimClass{256, 256}));
  // d, dv <= 32 in the 32 class (measured 1.26-1.40x the 64 class: 2026-11-27-headdim-small-708f029);
  // with soft-cap or ALiBi in kMmaDimClasses' 64 (the 32 class is built without them).
  EXPECT_EQ(fine(24, 16), (HeadDimClass{32, 32}));
  EXPECT_EQ(fine(32, 40), (HeadDimClass{64, 64}));
  EXPECT_EQ(mma_nvidia_class(24, 24, false, false), (HeadDimClass{32, 32}));
  EXPECT_EQ(mma_nvidia_class(24, 24, true, false), (HeadDimClass{64, 64}));
  EXPECT_EQ(mma_nvidia_class(24, 24, false, true), (HeadDimClass{64, 64}));
  for (int d = kHeadDimStep; d <= 256; d += kHeadDimStep) {
    const HeadDimClass f = fine(d, d), c = head_dim_class(kMmaDimClasses, d, d);
    ASSERT_TRUE(f) << d;
    EXPECT_LE(f.d, c.d) << d;
    if (d > 128 && d <= 192) EXPECT_LT(f.d, c.d) << d << ": a narrower class than mma's 256";
  }
  EXPECT_FALSE(fine(264, 264));
  EXPECT_FALSE(fine(60, 60));
  // The dispatcher's reason names the class mma runs the problem in (mma_nvidia_class): the fine
  // ladder's, kMmaDimClasses' with soft-cap or ALiBi (the 160 and 192 classes are built without them).
  const Selection s = select(kSm80, prob(1024, 1024, 136), kCuda, kernels());
  ASSERT_TRUE(s) << s.describe();
  EXPECT_EQ(s.kernel->name, "mma");
  EXPECT_NE(s.reason.find("d=136, dv=136 in the 160/160 tile class"), std::string::npos) << s.reason;
  const Selection own = select(kSm80, prob(1024, 1024, 192), kCuda, kernels());
  EXPECT_NE(own.reason.find("d=192, dv=192: its own tile class (192/192)"), std::string::npos) << own.reason;
  for (const bool alibi : {false, true}) {
    AttnProblem x = prob(1024, 1024, 136);
    if (alibi) x.alibi_slopes.assign(static_cast<std::size_t>(x.hq), 0.5);
    else x.softcap = 20;
    const Selection e = select(kSm80, x, kCuda, kernels());
    ASSERT_TRUE(e) << e.describe();
    EXPECT_EQ(e.kernel->name, "mma");
    EXPECT_NE(e.reason.find("d=136, dv=136 in the 256/256 tile class"), std::string::npos) << alibi << ": " << e.reason;
  }
  // mma_nvidia_class is the launcher's choice too: the extras and the variant mma/classes=coarse take
  // kMmaDimClasses, everything else the fine ladder.
  EXPECT_EQ(mma_nvidia_class(136, 136, false, false), (HeadDimClass{160, 160}));
  EXPECT_EQ(mma_nvidia_class(136, 136, true, false), (HeadDimClass{256, 256}));
  EXPECT_EQ(mma_nvidia_class(136, 136, false, true), (HeadDimClass{256, 256}));
  EXPECT_EQ(mma_nvidia_class(40, 40, false, false), (HeadDimClass{64, 64}));
}

// Every head dim FlashAttention supports (multiples of 8 up to 256) runs on the tensor cores, and
// d != dv too; the reason names the tile class it runs in.
TEST(Select, EveryMultipleOf8UpTo256RunsOnTheTensorCores) {
#if defined(FLASHPROBE_BACKEND_CUDA)
  const std::string hopper = "wgmma";
#else
  const std::string hopper = "mma";
#endif
  for (int d = 8; d <= 256; d += 8) {
    const Selection a = select(kSm80, prob(1024, 1024, d), kCuda, kernels());
    ASSERT_TRUE(a) << a.describe();
    EXPECT_EQ(a.kernel->name, "mma") << a.describe();
    EXPECT_NE(a.reason.find("tile class"), std::string::npos) << a.reason;
    const Selection h = select(kSm90, prob(4096, 4096, d, DType::bf16), kCuda, kernels());
    ASSERT_TRUE(h) << h.describe();
    // every d = dv fits a wgmma class; mma's own 32/32 class goes first (MmaFirstInItsSmallClassOnHopper)
    EXPECT_EQ(h.kernel->name, d <= 32 ? std::string("mma") : hopper) << h.describe();
  }
  const Selection d40 = select(kSm80, prob(1024, 1024, 40), kCuda, kernels());
  EXPECT_NE(d40.reason.find("d=40, dv=40 in the 64/64 tile class (the general instantiation)"), std::string::npos)
      << d40.reason;
  const Selection d128 = select(kSm80, prob(1024, 1024, 128), kCuda, kernels());
  EXPECT_NE(d128.reason.find("d=128, dv=128: its own tile class (128/128)"), std::string::npos) << d128.reason;
  AttnProblem mla = prob(2048, 2048, 192);  // DeepSeek's MLA prefill: d = 192, dv = 128
  mla.dv = 128;
  mla.causal = Causal::bottom_right;
  const Selection mla80 = select(kSm80, mla, kCuda, kernels());
  ASSERT_TRUE(mla80) << mla80.describe();
  EXPECT_EQ(mla80.kernel->name, "mma") << mla80.describe();
  EXPECT_NE(mla80.reason.find("d=192, dv=128 in the 192/192 tile class"), std::string::npos) << mla80.reason;
  const Selection mla90 = select(kSm90, mla, kCuda, kernels());
  ASSERT_TRUE(mla90) << mla90.describe();
  EXPECT_EQ(mla90.kernel->name, hopper) << mla90.describe();
  if (hopper == "wgmma") {
    EXPECT_NE(mla90.reason.find("its own tile class (192/128)"), std::string::npos) << mla90.reason;
  }
  AttnProblem narrow_v = prob(2048, 2048, 64);
  narrow_v.dv = 40;
  const Selection nv = select(kSm90, narrow_v, kCuda, kernels());
  ASSERT_TRUE(nv) << nv.describe();
  EXPECT_EQ(nv.kernel->name, hopper) << nv.describe();
  EXPECT_NE(nv.reason.find("d=64, dv=40 in the 64/64 tile class"), std::string::npos) << nv.reason;
  // Past 256 or off the step: refused with the rule named.
  for (int d : {264, 60}) {
    const Support s = find_kernel("mma")->supports(kSm80, prob(128, 128, d));
    EXPECT_FALSE(s) << d;
    EXPECT_NE(s.reason.find("multiples of 8 up to 256"), std::string::npos) << s.reason;
  }
  // AMD keeps d = dv in its classes (the masking is run on NVIDIA only).
  AttnProblem amd = prob(128, 128, 64);
  amd.dv = 128;
  EXPECT_NE(find_kernel("mma")->supports(kGfx1100, amd).reason.find("d == dv"), std::string::npos);
  EXPECT_FALSE(find_kernel("mma")->supports(kGfx1100, prob(128, 128, 40)));
}

TEST(Select, F32GoesToRef3pass) {
  const Selection s = select(kSm90, prob(128, 128, 64, DType::f32), kCuda, kernels());
  ASSERT_TRUE(s) << s.describe();
  EXPECT_EQ(s.kernel->name, "ref3pass");
  EXPECT_NE(rejection(s, "tiled").find("dtype=f32"), std::string::npos) << s.describe();
  EXPECT_NE(rejection(s, "decode").find("dtype=f32"), std::string::npos) << s.describe();
}

TEST(Select, DecodeLimits) {
  const Selection big_d = select(kSm90, prob(1, 100, 512), kCuda, kernels());
  ASSERT_TRUE(big_d);
  EXPECT_EQ(big_d.kernel->name, "ref3pass");
  EXPECT_NE(rejection(big_d, "decode").find("d=512"), std::string::npos) << big_d.describe();
  EXPECT_TRUE(find_kernel("decode")->supports(kSm90, prob(kDecodeMaxSq, 10, 64)));
  const Support s = find_kernel("decode")->supports(kSm90, prob(kDecodeMaxSq + 1, 10, 64));
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("sq=9"), std::string::npos) << s.reason;
}

TEST(Select, NvidiaArchitectureCompatibility) {
  EXPECT_EQ(binary_runs_on(kCuda, kSm80), "");
  EXPECT_EQ(binary_runs_on(kCuda, kSm86), "");  // sm_80 SASS runs on sm_86
  EXPECT_EQ(binary_runs_on(kCuda, kSm90), "");
  EXPECT_EQ(binary_runs_on(kCuda, kSm100), "");  // compute_90 PTX is JIT-compiled
  const std::string old = binary_runs_on(kCuda, kSm75);
  EXPECT_NE(old.find("sm_75"), std::string::npos) << old;
  const BinaryTargets sass_only{"nvidia", {"80-real", "90-real"}};
  EXPECT_EQ(binary_runs_on(sass_only, kSm86), "");
  EXPECT_NE(binary_runs_on(sass_only, kSm100), "");  // no PTX: nothing for sm_100
  const BinaryTargets ptx_only{"nvidia", {"80-virtual"}};
  EXPECT_EQ(binary_runs_on(ptx_only, kSm90), "");
  EXPECT_NE(binary_runs_on(ptx_only, kSm75), "");
  EXPECT_FALSE(select(kSm75, prob(128, 128, 64), kCuda, kernels()));
}

TEST(Select, AmdNeedsItsOwnCodeObject) {
  const Selection ok = select(kGfx90a, prob(128, 128, 64), kHip, kernels());
  ASSERT_TRUE(ok) << ok.describe();
  EXPECT_EQ(ok.kernel->name, "mma");  // MFMA 32x32x8 takes d = 64 on gfx90a
  const Selection rdna = select(kGfx1100, prob(128, 128, 64), kHip, kernels());
  EXPECT_FALSE(rdna);
  EXPECT_NE(rdna.reason.find("no code object for gfx1100"), std::string::npos) << rdna.reason;
  EXPECT_NE(rdna.reason.find("GPU_TARGETS=gfx1100"), std::string::npos) << rdna.reason;
}

// mma's family check reads the atoms' target lists (flashprobe/atoms/targets.h): RDNA3.5 and gfx950
// take mma, gfx908 has no bf16_1k MFMA so its bf16 problems go elsewhere, and a gfx10 part none.
TEST(Select, MmaFamiliesAreTheAtomsTargetLists) {
  const BinaryTargets any_amd{"amd", {"gfx908", "gfx950", "gfx1151", "gfx1030"}};
  EXPECT_EQ(select(device("amd", "gfx1151", 32), prob(128, 128, 64), any_amd, kernels()).kernel->name, "mma");
  EXPECT_EQ(select(device("amd", "gfx950", 64), prob(128, 128, 64), any_amd, kernels()).kernel->name, "mma");
  EXPECT_EQ(select(device("amd", "gfx908", 64), prob(128, 128, 64), any_amd, kernels()).kernel->name, "mma");
  const Selection bf16 = select(device("amd", "gfx908", 64), prob(128, 128, 64, DType::bf16), any_amd, kernels());
  EXPECT_NE(rejection(bf16, "mma").find("bf16_1k"), std::string::npos) << bf16.describe();
  const Selection rdna2 = select(device("amd", "gfx1030", 32), prob(128, 128, 64), any_amd, kernels());
  EXPECT_NE(rejection(rdna2, "mma").find("no matrix atom"), std::string::npos) << rdna2.describe();
}

TEST(Select, VendorMismatchAndNoDevice) {
  const Selection amd_on_cuda = select(kGfx1100, prob(128, 128, 64), kCuda, kernels());
  EXPECT_FALSE(amd_on_cuda);
  EXPECT_NE(amd_on_cuda.reason.find("gfx1100"), std::string::npos) << amd_on_cuda.reason;
  const Selection nv_on_hip = select(kSm90, prob(128, 128, 64), kHip, kernels());
  EXPECT_FALSE(nv_on_hip);
  EXPECT_NE(nv_on_hip.reason.find("sm_90"), std::string::npos) << nv_on_hip.reason;
  const Selection none = select(kNone, prob(128, 128, 64), kCuda, kernels());
  EXPECT_FALSE(none);
  EXPECT_NE(none.reason.find("no GPU device"), std::string::npos) << none.reason;
  const Selection off = select(kSm90, prob(128, 128, 64), kOff, kernels());
  EXPECT_FALSE(off);
  EXPECT_NE(off.reason.find("FLASHPROBE_GPU=off"), std::string::npos) << off.reason;
}

TEST(Select, InvalidProblemIsRefusedByEveryKernel) {
  AttnProblem p = prob(16, 16, 64);
  p.hq = 3;  // not a multiple of hkv = 2
  const Selection s = select(kSm90, p, kCuda, kernels());
  EXPECT_FALSE(s);
  for (auto& name : {"decode", "tiled", "ref3pass"}) EXPECT_NE(rejection(s, name).find("hq"), std::string::npos) << s.describe();
}

TEST(Select, WaveSizeOfTheDeviceIsChecked) {
  DeviceInfo odd = kSm90;
  odd.wave_size = 16;
  const Support s = find_kernel("ref3pass")->supports(odd, prob(4, 4, 64));
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("wave_size=16"), std::string::npos) << s.reason;
}

TEST(Select, AnMmaKernelPlugsInByName) {
  std::vector<KernelInfo> table = kernels();
  KernelInfo mma{"mma", "fake tensor-core path",
                 [](const DeviceInfo&, const AttnProblem& p) {
                   return p.d % 16 == 0 && p.dtype != DType::f32 ? Support::yes() : Support::no("d or dtype");
                 },
                 [](const AttnProblem&) { return std::size_t{0}; }, nullptr};
  table.push_back(mma);
  AttnProblem first = prob(128, 128, 272);  // d = 272: wgmma refuses it, mma is next on sm_90
  first.causal = Causal::bottom_right;
  const Selection s = select(kSm90, first, kCuda, table);
  ASSERT_TRUE(s);
  EXPECT_EQ(s.kernel->name, "mma");
  ASSERT_EQ(s.rejected.size(), 1u) << s.describe();
  EXPECT_NE(rejection(s, "wgmma").find("d=272"), std::string::npos) << s.describe();
  const Selection odd = select(kSm90, prob(128, 128, 264), kCuda, table);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd.kernel->name, "ref3pass");
  EXPECT_EQ(rejection(odd, "mma"), "d or dtype");
}

TEST(Select, ThisBuildsTargetsMatchTheBackend) {
  const BinaryTargets b = binary_targets();
  const std::string backend = b.vendor;
#if defined(FLASHPROBE_BACKEND_OFF)
  EXPECT_EQ(backend, "");
  EXPECT_FALSE(select(kSm90, prob(128, 128, 64)));
#elif defined(FLASHPROBE_BACKEND_CUDA)
  EXPECT_EQ(backend, "nvidia");
  EXPECT_FALSE(b.archs.empty());
#else
  EXPECT_EQ(backend, "amd");
  EXPECT_FALSE(b.archs.empty());
#endif
}

TEST(Registry, NamesAndLookup) {
  ASSERT_NE(find_kernel("tiled"), nullptr);
  ASSERT_NE(find_kernel("decode"), nullptr);
  ASSERT_NE(find_kernel("ref3pass"), nullptr);
  ASSERT_NE(find_kernel("mma"), nullptr);
  EXPECT_EQ(find_kernel("nope"), nullptr);
  ASSERT_NE(find_kernel("wgmma"), nullptr);
  EXPECT_EQ(kernel_names(), "mma, wgmma, decode, tiled, ref3pass");
  for (auto& k : kernels()) {
    EXPECT_FALSE(k.description.empty()) << k.name;
    EXPECT_TRUE(k.supports && k.workspace_bytes && k.launch) << k.name;
  }
}

// The Hopper path: sm_90 only, f16/bf16, d = dv in {64, 128}, strides the TMA can address. Its
// sm_90a code exists only in the cuda backend; elsewhere it refuses every problem and says why.
TEST(Registry, WgmmaSupportsHopperProblemsTheTmaCanAddress) {
  const KernelInfo* w = find_kernel("wgmma");
  ASSERT_NE(w, nullptr);
#if defined(FLASHPROBE_BACKEND_CUDA)
  EXPECT_TRUE(w->supports(kSm90, prob(4096, 4096, 128))) << w->supports(kSm90, prob(4096, 4096, 128)).reason;
  EXPECT_TRUE(w->supports(kSm90, prob(3, 5, 64, DType::bf16)));
  AttnProblem bhsd = prob(100, 300, 64);
  bhsd.with_layout(TensorLayout::bhsd);
  EXPECT_TRUE(w->supports(kSm90, bhsd));
  for (const DeviceInfo& dev : {kSm80, kSm86, kSm100, kGfx1100, kNone}) {
    const Support s = w->supports(dev, prob(256, 256, 64));
    EXPECT_FALSE(s) << dev.arch;
    EXPECT_NE(s.reason.find("sm_90"), std::string::npos) << s.reason;
  }
  // Every multiple of 8 up to 256, d != dv too (kWgmmaDimClasses: 64, 128, 160, 192/128, 256); nothing wider.
  for (int d = 8; d <= 256; d += 8) EXPECT_TRUE(w->supports(kSm90, prob(256, 256, d))) << "d=" << d;
  EXPECT_NE(w->supports(kSm90, prob(256, 256, 264)).reason.find("d=264"), std::string::npos);
  EXPECT_NE(w->supports(kSm90, prob(256, 256, 100)).reason.find("multiples of 8"), std::string::npos);
  EXPECT_NE(w->supports(kSm90, prob(256, 256, 64, DType::f32)).reason.find("dtype=f32"), std::string::npos);
  AttnProblem odd = prob(64, 64, 64);
  odd.k = odd.v = Strides{64LL * 2 * 68, 2 * 68, 68, 1};  // rows 136 bytes apart: not 16-byte multiples
  const Support so = w->supports(kSm90, odd);
  EXPECT_FALSE(so);
  EXPECT_NE(so.reason.find("multiples of 8"), std::string::npos) << so.reason;
  AttnProblem dv = prob(64, 64, 64);
  dv.dv = 128;
  EXPECT_TRUE(w->supports(kSm90, dv));
  dv.dv = 192;  // 64/192 in class 256
  EXPECT_TRUE(w->supports(kSm90, dv));
  dv.dv = 264;
  EXPECT_NE(w->supports(kSm90, dv).reason.find("dv=264"), std::string::npos);
  dv.d = 192;  // MLA's 192/128 and what its class takes
  for (int v : {128, 64, 8}) {
    dv.dv = v;
    EXPECT_TRUE(w->supports(kSm90, dv)) << "dv=" << v;
  }
  dv.d = 200;  // class 256
  dv.dv = 128;
  EXPECT_TRUE(w->supports(kSm90, dv));
  dv.d = 264;
  EXPECT_NE(w->supports(kSm90, dv).reason.find("d=264"), std::string::npos);
  EXPECT_NE(w->supports(kSm90, prob(64, 0, 64)).reason.find("sk=0"), std::string::npos);
  // The persistent grid counts its work items in 32 bits, as the launch builds the list for d (at
  // d = 128 without a mask one item per 128-row block, at d = 64 one per pair). 65535 heads x 32767
  // batches of two row blocks: 4294770690 singles at d = 128, refused; as pairs (d = 64) 2147385345,
  // under the bound. 16383 batches fit at d = 128.
  AttnProblem wide = prob(256, 256, 128);
  wide.hq = wide.hkv = 65535;
  wide.batch = 32767;
  const Support sw = w->supports(kSm90, wide);
  EXPECT_FALSE(sw);
  EXPECT_NE(sw.reason.find("work items"), std::string::npos) << sw.reason;
  wide.d = wide.dv = 64;
  EXPECT_TRUE(w->supports(kSm90, wide)) << w->supports(kSm90, wide).reason;
  wide.d = wide.dv = 128;
  wide.batch = 16383;  // 2 x 65535 x 16383 = 2147319810 singles
  EXPECT_TRUE(w->supports(kSm90, wide)) << w->supports(kSm90, wide).reason;
#else
  const Support s = w->supports(kSm90, prob(4096, 4096, 128));
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("sm_90a"), std::string::npos) << s.reason;
#endif
}

// On sm_90 the Hopper path goes first for every prefill (select.cpp: since its affine mask it measured
// ahead of mma on the short causal d = 64 problems too, where mma went first before); other GPUs use
// mma; decode rows stay decode's; strides the TMA cannot address and head dims it lacks fall back to mma.
// mma's 32/32 class (d, dv <= 32 without soft-cap or ALiBi) ran 1.11-1.35x wgmma's 64/64 class in one
// call (reports/data/h100-80gb-hbm3/2026-11-27-headdim-smalld-06a5a85): those problems go to mma first
// on sm_90, with wgmma's sm_90a code taken as present (every build checks the order); every other one
// to wgmma, soft-cap at d = 32 among them (mma's class for it is 64, not 32).
TEST(Select, MmaFirstInItsSmallClassOnHopper) {
  std::vector<KernelInfo> with_wgmma = kernels();
  for (KernelInfo& k : with_wgmma)
    if (k.name == "wgmma") k.supports = [](const DeviceInfo&, const AttnProblem&) { return Support::yes(); };
  const auto dims = [](int d, int dv) {
    AttnProblem p = prob(4096, 4096, d, DType::bf16);
    p.dv = dv;
    return p;
  };
  for (const auto& [d, dv] : {std::pair{8, 8}, std::pair{16, 16}, std::pair{24, 24}, std::pair{32, 32}, std::pair{16, 32},
                              std::pair{32, 8}}) {
    const AttnProblem p = dims(d, dv);
    EXPECT_EQ(preference_order(kSm90, p).front(), "mma") << p.id();
    const Selection s = select(kSm90, p, kCuda, with_wgmma);
    ASSERT_TRUE(s) << s.describe();
    EXPECT_EQ(s.kernel->name, "mma") << s.describe();
    EXPECT_NE(s.reason.find("32/32 class measured 1.11-1.35x wgmma's 64/64"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("2026-11-27-headdim-smalld-06a5a85"), std::string::npos) << s.reason;
    AttnProblem causal = p;
    causal.causal = Causal::bottom_right;
    EXPECT_EQ(select(kSm90, causal, kCuda, with_wgmma).kernel->name, "mma") << causal.id();
  }
  AttnProblem capped = dims(32, 32);
  capped.softcap = 30;
  for (const AttnProblem& p : {dims(40, 40), dims(32, 40), dims(40, 8), dims(64, 64), capped}) {
    EXPECT_EQ(preference_order(kSm90, p).front(), "wgmma") << p.id();
    EXPECT_EQ(select(kSm90, p, kCuda, with_wgmma).kernel->name, "wgmma") << p.id();
  }
  // Not Hopper: mma either way, and no claim about wgmma in its reason.
  const Selection a100 = select(kSm80, dims(16, 16), kCuda, kernels());
  ASSERT_TRUE(a100) << a100.describe();
  EXPECT_EQ(a100.kernel->name, "mma");
  EXPECT_EQ(a100.reason.find("wgmma"), std::string::npos) << a100.reason;
}

TEST(Select, HopperPathWhereItMeasuredFaster) {
#if defined(FLASHPROBE_BACKEND_CUDA)
  const std::string hopper = "wgmma";
#else
  const std::string hopper = "mma";  // no sm_90a code in this build: wgmma refuses, mma follows
#endif
  const Selection h = select(kSm90, prob(4096, 4096, 128), kCuda, kernels());
  ASSERT_TRUE(h) << h.describe();
  EXPECT_EQ(h.kernel->name, hopper) << h.describe();
  if (hopper == "wgmma") EXPECT_NE(h.reason.find("wgmma + TMA"), std::string::npos) << h.reason;
  else EXPECT_NE(rejection(h, "wgmma").find("sm_90a"), std::string::npos) << h.describe();
  EXPECT_EQ(select(kSm90, prob(4096, 4096, 64), kCuda, kernels()).kernel->name, hopper);
  EXPECT_EQ(select(kSm90, prob(2048, 2048, 96), kCuda, kernels()).kernel->name, hopper);  // d = 96 in class 128
  EXPECT_EQ(select(kSm90, prob(2048, 2048, 192), kCuda, kernels()).kernel->name, hopper);  // 192/192 in wgmma's class 256
  const auto causal = [](int sq, int sk, int d) {
    AttnProblem p = prob(sq, sk, d);
    p.causal = Causal::bottom_right;
    return p;
  };
  // Short problems too, causal d = 64 among them (mma first there before the affine mask), in every
  // build: the preference and select() with wgmma's sm_90a code taken as present.
  std::vector<KernelInfo> with_wgmma = kernels();
  for (KernelInfo& k : with_wgmma)
    if (k.name == "wgmma") k.supports = [](const DeviceInfo&, const AttnProblem&) { return Support::yes(); };
  for (const AttnProblem& p : {causal(512, 512, 64), causal(1024, 1024, 64), causal(512, 1024, 64), causal(1025, 1025, 64),
                               causal(2048, 2048, 64), prob(512, 512, 64), prob(1024, 1024, 64), causal(512, 512, 128),
                               prob(512, 512, 128)}) {
    EXPECT_EQ(preference_order(kSm90, p).front(), "wgmma") << p.id();
    const Selection s = select(kSm90, p, kCuda, with_wgmma);
    ASSERT_TRUE(s) << s.describe();
    EXPECT_EQ(s.kernel->name, "wgmma") << p.id();
    EXPECT_EQ(select(kSm90, p, kCuda, kernels()).kernel->name, hopper) << p.id();
  }
  const Selection a100 = select(kSm80, prob(4096, 4096, 128), kCuda, kernels());
  EXPECT_EQ(a100.kernel->name, "mma");
  EXPECT_NE(rejection(a100, "wgmma").find("sm_90"), std::string::npos) << a100.describe();
  EXPECT_EQ(select(kSm90, prob(1, 4096, 128), kCuda, kernels()).kernel->name, "decode");
  AttnProblem odd = prob(256, 256, 128);
  odd.k = odd.v = Strides{256LL * 4 * 132, 4 * 132, 132, 1};  // rows 264 bytes apart: no TMA
  EXPECT_EQ(select(kSm90, odd, kCuda, kernels()).kernel->name, "mma");
}

TEST(Registry, WorkspaceSizes) {
  const AttnProblem p = prob(5, 77, 64);
  EXPECT_EQ(find_kernel("ref3pass")->workspace_bytes(p), std::size_t{2 * 4 * 5 * 77 * 4});
  EXPECT_EQ(find_kernel("tiled")->workspace_bytes(p), 0u);
  const KernelInfo d3 = decode_with_splits(3);
  EXPECT_EQ(d3.name, "decode/splits=3");
  EXPECT_EQ(d3.workspace_bytes(p), std::size_t{2 * 4 * 5 * 3 * (64 + 1) * 4});
  EXPECT_THROW(decode_with_splits(0), UsageError);
  const KernelInfo w3 = wgmma_with_blocks(3);
  EXPECT_EQ(w3.name, "wgmma/blocks=3");
  EXPECT_EQ(w3.workspace_bytes(p), 0u);
  EXPECT_THROW(wgmma_with_blocks(0), UsageError);
  EXPECT_EQ(find_kernel("ref3pass")->workspace_bytes(prob(3, 0, 64)), 0u);
}

}  // namespace
}  // namespace flashprobe::kernels
