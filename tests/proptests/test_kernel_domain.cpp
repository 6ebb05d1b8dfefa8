// The gate's device check on the CPU: every kernel is asked about a device with a problem of its own
// domain (decode was asked with sq = 128, which it refuses by design, and its nine properties were
// skipped on the H100 as if the device could not run them), and a refusal counts only when the
// kernel refuses its whole domain there (the verdict rule: tests/gate/test_gate_verdict.cpp).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/mutants.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/variants.h"
#include "flashprobe/proptests/generators.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/gate/stand_in_device.h"

using namespace flashprobe;
using namespace flashprobe::proptests;
using namespace flashprobe::gate;

namespace {

DeviceInfo h100() { return stand_in_h100(); }
std::vector<DeviceInfo> devices() {
  return {stand_in_device("nvidia", "sm_80", 80, 32), h100(), stand_in_device("amd", "gfx1100", 0, 32),
          stand_in_device("amd", "gfx90a", 0, 64), stand_in_device("amd", "gfx942", 0, 64)};
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

// wgmma's TMA takes strides in multiples of kWgmmaStrideAlign elements only, and its domain draws no
// other: rows padded by 3 elements were refused and re-drawn, so its gate almost never drew K in BSHD
// with V in BHSD (GateDraws below). Its supports() checks the strides before this build's code, so
// the draws are checked in every tree.
TEST(KernelDomain, WgmmasDomainDrawsOnlyStridesItsTmaTakes) {
  const kernels::KernelInfo& wgmma = *kernels::find_kernel("wgmma");
  Domain d = kernel_domain(wgmma, h100());
  EXPECT_EQ(d.stride_align, kernels::kWgmmaStrideAlign);
  d.supports = nullptr;
  int strided = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const AttnProblem p = generate_case(d, seed).problem;
    strided += !p.q.is_zero();
    const kernels::Support s = wgmma.supports(h100(), p);
    EXPECT_EQ(s.reason.find("the TMA needs"), std::string::npos) << p.id() << ": " << s.reason;
  }
  EXPECT_GE(strided, 100) << "strided problems among 400";
}

// ---- What the gate's default budget (150 cases per property, RapidCheck's sizes 0..100) draws ----

namespace {

// The cases one gate property draws: RapidCheck's own run of 150 cases over the kernel's domain.
std::vector<Case> gate_draws(const Domain& d, std::uint64_t seed, int n = 150) {
  std::vector<Case> out;
  rc::detail::TestMetadata md;
  md.id = "gate_draws";
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = n;
  params.maxSize = 100;
  const auto r = rc::detail::checkTestable([&] { out.push_back(*gen_case(d)); }, md, params);
  EXPECT_TRUE(r.template is<rc::detail::SuccessResult>());
  if (out.size() > static_cast<std::size_t>(n)) out.erase(out.begin(), out.end() - n);  // (no shrinking: all pass)
  return out;
}

bool bshd_tensor(const Strides& s) { return !s.is_zero() && s.h < s.s; }
bool bhsd_tensor(const Strides& s) { return !s.is_zero() && s.s < s.h; }

// The largest |score| a visible key reaches (scale * q.k; soft-cap and ALiBi left out: the scores a
// kernel forms before them).
double max_visible_score(const Case& c) {
  const AttnProblem& p = c.problem;
  const AttnInputs in = c.make_inputs();
  const Strides qs = p.q_strides(), ks = p.k_strides();
  double m = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.hq; ++h)
      for (int i = 0; i < p.sq; ++i)
        for (int j = 0; j < p.keys(b); ++j) {
          if (!p.visible(b, i, j)) continue;
          double dot = 0;
          for (int x = 0; x < p.d; ++x) dot += in.q.get(offset(qs, b, i, h, x)) * in.k.get(offset(ks, b, j, p.kv_head(h), x));
          m = std::max(m, std::fabs(dot * p.effective_scale()));
        }
  return m;
}

}  // namespace

TEST(GateDraws, LongRowsWithFewRowsAreAShareOfEveryKernelsCases) {
  for (const auto& k : kernels::kernels()) {
    if (!device_refusal(k, h100()).empty()) continue;  // wgmma in a build without sm_90a code
    const Domain d = kernel_domain(k, h100());
    int longs = 0, f16_longs = 0, many_thousands = 0;
    for (const Case& c : gate_draws(d, 11)) {
      if (c.problem.sk < 1024) continue;
      ++longs;
      f16_longs += c.problem.dtype == DType::f16;
      many_thousands += c.problem.sk >= 2048;
      EXPECT_EQ(c.problem.batch, 1) << c.id();
      EXPECT_LE(c.problem.hq, 2) << c.id();
      EXPECT_LE(std::int64_t{c.problem.sq}, std::max<std::int64_t>(16, 3 * d.tile_n + 1)) << c.id();  // edge windows may add rows
      EXPECT_GE(c.problem.sk, kSampledRowsFromKeys) << c.id();  // checked on sampled rows
    }
    EXPECT_GE(longs, 6) << k.name << ": long rows (Sk >= 1024) among 150 cases";
    EXPECT_GE(f16_longs, 2) << k.name << ": f16 long rows (an O accumulated in fp16 shows there)";
    EXPECT_GE(many_thousands, 3) << k.name << ": rows of 2k keys or more";
  }
}

// The tensor-core kernels take every multiple of 8 up to their widest tile class and d != dv
// (registry.h): their gates draw each class, head dims below a class, and dv unlike d.
TEST(GateDraws, TensorCoreKernelsDrawHeadDimsBelowTheirClassAndDvUnlikeD) {
  for (const char* name : {"mma", "wgmma", "mma/classes=coarse", "wgmma/classes=fine"}) {
    const kernels::KernelInfo k = kernels::kernel_or_variant(name);
    const bool fine = std::string(name) == "mma", coarse = std::string(name) == "mma/classes=coarse";
    const bool wfine = std::string(name) == "wgmma/classes=fine";
    Domain d = kernel_domain(k, h100());
    // Without sm_90a code in this build wgmma refuses everything: its head dims alone then, so that
    // the draws are checked in every build.
    if (!device_refusal(k, h100()).empty())
      d.supports = [wfine](const AttnProblem& p) { return static_cast<bool>(kernels::wgmma_class(p.d, p.dv, wfine)); };
    std::map<int, int> dims;
    int below_class = 0, dv_unlike_d = 0;
    for (const Case& c : gate_draws(d, 15, 300)) {
      const AttnProblem& p = c.problem;
      ++dims[p.d];
      const kernels::HeadDimClass cls = fine     ? kernels::head_dim_class(kernels::kMmaFineDimClasses, p.d, p.dv)
                                        : coarse ? kernels::head_dim_class(kernels::kMmaDimClasses, p.d, p.dv)
                                                 : kernels::wgmma_class(p.d, p.dv, wfine);
      ASSERT_TRUE(cls) << name << " drew " << c.id() << ", outside its head dims";
      below_class += p.d != cls.d || p.dv != cls.dv;
      dv_unlike_d += p.d != p.dv;
    }
    const auto classes =
        fine ? std::vector<kernels::HeadDimClass>(std::begin(kernels::kMmaFineDimClasses), std::end(kernels::kMmaFineDimClasses))
        : coarse
            ? std::vector<kernels::HeadDimClass>(std::begin(kernels::kMmaDimClasses), std::end(kernels::kMmaDimClasses))
        : wfine ? std::vector<kernels::HeadDimClass>(std::begin(kernels::kWgmmaFineDimClasses), std::end(kernels::kWgmmaFineDimClasses))
                : std::vector<kernels::HeadDimClass>(std::begin(kernels::kWgmmaDimClasses), std::end(kernels::kWgmmaDimClasses));
    // (192/128: d = 192 comes with dv = 192 unless dv is drawn apart, which is rare at RapidCheck's
    // small sizes; wgmma refuses 192/192 and the draw repeats. The grid covers 192/128.)
    for (const auto& c : classes)
      if (c.d == c.dv) {
        EXPECT_GE(dims[c.d], 3) << name << ": d=" << c.d;
      }
    EXPECT_GE(dims[8], 3) << name << ": d=8, one 16-byte chunk of a 64-wide class";
    EXPECT_GE(below_class, 60) << name << ": head dims below their tile class among 300 cases";
    // (d != dv is 1 in 5 problems at full size and rarer at RapidCheck's small sizes: 6 of mma's 300.)
    EXPECT_GE(dv_unlike_d, 4) << name << ": dv != d among 300 cases";
  }
}

// wgmma's classes differ in their key tiles (head_dim_classes.h: 128 keys, 64 for 160/160 and
// 256/256): its gate draws Sk at the edges of every class's tiles (t - 1, t, t + 1, 2t - 1, 2t + 1),
// from the classes the kernel is built from, not a copy of one width (the domain said 128, so 63, 64
// and 65, the 64-key classes' first tile edge, came only from the uniform draw: 0-3 of 1200 cases).
TEST(GateDraws, WgmmaDrawsSkAtEveryClasssKeyTileEdges) {
  for (const char* name : {"wgmma", "wgmma/classes=fine"}) {
    const kernels::KernelInfo k = kernels::kernel_or_variant(name);
    const bool fine = std::string(name) != "wgmma";
    Domain d = kernel_domain(k, h100());
    EXPECT_EQ(d.tile_m, kernels::kWgmmaBlockRows) << name;
    if (!device_refusal(k, h100()).empty())  // (a build without sm_90a code: its classes alone)
      d.supports = [fine](const AttnProblem& p) { return static_cast<bool>(kernels::wgmma_class(p.d, p.dv, fine)); };
    std::map<int, int> sk;
    for (std::uint64_t seed = 21; seed < 29; ++seed)
      for (const Case& c : gate_draws(d, seed)) ++sk[c.problem.sk];
    const auto check = [&](const kernels::HeadDimClass& c) {
      const int t = kernels::wgmma_tile_keys(c);
      for (int v : {t - 1, t, t + 1, 2 * t - 1, 2 * t + 1})
        EXPECT_GE(sk[v], 5) << name << ": Sk = " << v << ", a tile edge of class " << c.d << "/" << c.dv << " (" << t
                            << " keys), among 1200 cases";
    };
    if (fine) {
      for (const auto& c : kernels::kWgmmaFineDimClasses) check(c);
    } else {
      for (const auto& c : kernels::kWgmmaDimClasses) check(c);
    }
  }
}

// Each class of a tensor-core ladder gets head dims below its own d drawn, its narrowest among them,
// whatever the order of the list (wgmma's 192/128 comes before 160/160 in it, and the 160 class got
// only 136: 144, the middle of its span and a d % 16 == 8 dim like 136, was never drawn).
TEST(GateDraws, EveryTensorCoreClassGetsItsNarrowestAndMiddleDims) {
  const auto check = [](const char* name, const auto& classes, auto class_of) {
    const Domain d = kernel_domain(kernels::kernel_or_variant(name), h100());
    std::vector<int> widths;
    for (const kernels::HeadDimClass& c : classes) widths.push_back(c.d);
    std::sort(widths.begin(), widths.end());
    for (const kernels::HeadDimClass& c : classes) {
      if (c.d != c.dv) continue;  // (square problems: d = dv below c.d)
      const int below = *std::find(widths.begin(), widths.end(), c.d) == widths.front()
                            ? 0
                            : *(std::find(widths.begin(), widths.end(), c.d) - 1);
      std::vector<int> in_class;
      for (int x : d.head_dims)
        if (x < c.d && class_of(x) == c) in_class.push_back(x);
      EXPECT_NE(std::find(in_class.begin(), in_class.end(), below + kernels::kHeadDimStep), in_class.end())
          << name << ": class " << c.d << "'s narrowest d " << below + kernels::kHeadDimStep;
      if (c.d - below > 2 * kernels::kHeadDimStep) {
        EXPECT_GE(in_class.size(), 2u) << name << ": class " << c.d << " spans " << below << ".." << c.d
                                       << " and gets one dim below it";
      }
    }
  };
  check("wgmma", kernels::kWgmmaDimClasses, [](int x) { return kernels::wgmma_class(x, x, false); });
  check("wgmma/classes=fine", kernels::kWgmmaFineDimClasses, [](int x) { return kernels::wgmma_class(x, x, true); });
  check("mma", kernels::kMmaFineDimClasses, [](int x) { return kernels::mma_nvidia_class(x, x, false, false); });
  check("mma/classes=coarse", kernels::kMmaDimClasses, [](int x) { return kernels::mma_nvidia_class(x, x, false, true); });
  const Domain w = kernel_domain(*kernels::find_kernel("wgmma"), h100());
  for (int x : {136, 144})
    EXPECT_NE(std::find(w.head_dims.begin(), w.head_dims.end(), x), w.head_dims.end()) << "wgmma's 160 class: d = " << x;
}

// mma/small=plain|fma|c32|occ run their own code only below the smallest class (src/mma/mma_small.h): their
// gates draw every head dim up to it, most of them below it, and d != dv there.
TEST(GateDraws, SmallHeadDimVariantsDrawTheirOwnDims) {
  for (const char* name : {"mma/small=plain", "mma/small=fma", "mma/small=c32", "mma/small=occ"}) {
    const Domain d = kernel_domain(kernels::kernel_or_variant(name), h100());
    std::map<int, int> dims;
    int below = 0, dv_unlike_d = 0;
    for (const Case& c : gate_draws(d, 15, 300)) {
      const AttnProblem& p = c.problem;
      ASSERT_TRUE(p.d <= kernels::kMmaDimClasses[0].d && p.dv <= kernels::kMmaDimClasses[0].d) << name << ": " << c.id();
      ++dims[p.d];
      below += p.d < kernels::kMmaDimClasses[0].d || p.dv < kernels::kMmaDimClasses[0].d;
      dv_unlike_d += p.d != p.dv;
    }
    for (int x = kernels::kHeadDimStep; x < kernels::kMmaDimClasses[0].d; x += kernels::kHeadDimStep)
      EXPECT_GE(dims[x], 3) << name << ": d=" << x;
    EXPECT_GE(below, 200) << name;
    EXPECT_GE(dv_unlike_d, 4) << name;
  }
}

TEST(GateDraws, EveryStridedKernelGetsIndependentLayoutsPerTensor) {
  for (const auto& k : kernels::kernels()) {
    if (!device_refusal(k, h100()).empty()) continue;
    int k_bshd_v_bhsd = 0, padded = 0, cache_room = 0, v_unlike_k = 0;
    for (const Case& c : gate_draws(kernel_domain(k, h100()), 12)) {
      const AttnProblem& p = c.problem;
      if (bshd_tensor(p.k) && bhsd_tensor(p.v)) ++k_bshd_v_bhsd;
      if (!p.k.is_zero() && (bshd_tensor(p.k) ? p.k.h : p.k.s) > p.d) ++padded;
      if (!p.v.is_zero() && p.v.b > contiguous_strides(bshd_tensor(p.v) ? TensorLayout::bshd : TensorLayout::bhsd, p.sk, p.hkv, p.dv).b)
        ++cache_room;
      if (p.k_strides() != p.v_strides()) ++v_unlike_k;
    }
    EXPECT_GE(k_bshd_v_bhsd, 2) << k.name << ": K in BSHD with V in BHSD";
    EXPECT_GE(padded, 3) << k.name << ": padded K rows";
    EXPECT_GE(cache_room, 3) << k.name << ": V caches with room past the keys";
    EXPECT_GE(v_unlike_k, 10) << k.name << ": V strides unlike K's";
  }
}

TEST(GateDraws, DecodesOwnCasesForceEverySplitCountAndCacheSteps) {
  const kernels::KernelInfo* dec = kernels::find_kernel("decode");
  const Domain d = kernel_domain(*dec, h100());
  ASSERT_TRUE(d.key_splits);
  std::map<std::string, int> seen;
  for (const Case& c : gate_draws(d, 13)) {
    const AttnProblem& p = c.problem;
    if (c.splits == 0) ++seen["default"];
    if (c.splits == 1) ++seen["1"];
    if (c.splits == 2) ++seen["2"];
    if (c.splits >= 3 && c.splits % 2 == 1 && c.splits <= 9) ++seen["odd"];
    if (c.splits > p.sk) ++seen["more splits than keys"];
    if (p.sq >= 2 && p.sq <= 8 && p.kv_offset > 0) ++seen["sq 2-8 with kv_offset"];
    EXPECT_LE(p.sq, kernels::kDecodeMaxSq);
  }
  for (const char* what : {"default", "1", "2", "odd", "more splits than keys", "sq 2-8 with kv_offset"})
    EXPECT_GE(seen[what], 3) << what;
  // Only split-K kernels draw a split count.
  for (const char* other : {"tiled", "mma", "ref3pass"})
    for (const Case& c : gate_draws(kernel_domain(*kernels::find_kernel(other), h100()), 14, 40)) EXPECT_EQ(c.splits, 0) << other;
}

// decode's plan (decode_plan.h) takes the half wave for one-row blocks and the full wave for blocks of
// several rows: its gate draws both, so that a property run of 150 cases checks each plan (21-30 one-row
// problems and 120-129 others at these seeds: MHA with sq = 1, or a soft-cap or ALiBi).
TEST(GateDraws, DecodeDrawsBothOfItsPlans) {
  const Domain d = kernel_domain(*kernels::find_kernel("decode"), h100());
  for (std::uint64_t seed : {16, 17, 18}) {
    int half = 0, full = 0;
    for (const Case& c : gate_draws(d, seed)) ++(kernels::decode_plan_half(c.problem) ? half : full);
    EXPECT_GE(half, 15) << "one-row blocks (the half wave) among 150 cases, seed " << seed;
    EXPECT_GE(full, 20) << "several-row blocks (the full wave) among 150 cases, seed " << seed;
  }
}

// Scores past 65504 (the fp16 range) inside the visible keys, for every dtype a kernel takes: a
// kernel that rounds scores to fp16 before its max turns them into Inf there.
TEST(GateDraws, LargeLogitsPassTheFp16RangeForEveryDtype) {
  for (const char* name : {"ref3pass", "decode", "tiled", "mma"}) {
    const Domain d = kernel_domain(*kernels::find_kernel(name), h100());
    std::map<DType, int> logits, past;
    for (const Case& c : gate_draws(d, 15)) {
      if (c.inputs != InputKind::large_logits) continue;
      const AttnProblem& p = c.problem;
      if (std::int64_t{p.batch} * p.hq * p.sq * p.sk * p.d > 50'000'000) continue;  // keep the test fast
      ++logits[p.dtype];
      past[p.dtype] += max_visible_score(c) > 65504;
    }
    for (DType t : d.dtypes) {
      EXPECT_GE(logits[t], 2) << name << " " << dtype_name(t) << ": large-logits cases";
      EXPECT_GE(past[t], 1) << name << " " << dtype_name(t) << ": cases with a visible score past 65504";
    }
    int total = 0, over = 0;
    for (auto [t, n] : logits) total += n, over += past[t];
    EXPECT_GE(over * 2, total) << name << ": most large-logits cases pass the fp16 range";
  }
}
