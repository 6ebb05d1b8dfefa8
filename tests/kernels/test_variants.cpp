// The named kernel variants (flashprobe/kernels/variants.h): every listed name resolves to an entry
// of that name, outside the production registry, with its kernel's support rules; option order is
// canonical; an unknown or malformed name is a UsageError naming the value and what is allowed; the
// wgmma schedules exist exactly where the build compiled them. Their launches are checked on the GPU
// (test_kernels_gpu: Variants/KernelGrid runs each listed variant over the kernel grid).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/variants.h"
#include "kernel_grid.h"

namespace flashprobe::kernels {
namespace {

DeviceInfo sm90() {
  DeviceInfo d;
  d.vendor = "nvidia";
  d.arch = "sm_90";
  d.wave_size = 32;
  d.global_mem_bytes = 80LL << 30;
  return d;
}

std::vector<AttnProblem> problems() {
  std::vector<AttnProblem> v;
  for (int d : {64, 72, 128})
    for (int sq : {1, 8, 300}) {
      AttnProblem p;
      p.batch = 2;
      p.hq = 4;
      p.hkv = 2;
      p.sq = sq;
      p.sk = 257;
      p.d = p.dv = d;
      p.dtype = p.out_dtype = DType::bf16;
      v.push_back(p);
    }
  return v;
}

std::string usage_error(const std::string& name) {
  try {
    (void)kernel_or_variant(name);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Variants, EveryListedNameResolvesOutsideTheRegistry) {
  const std::vector<std::string> names = variant_names();
  ASSERT_GE(names.size(), 4u);
  for (const std::string& n : names) {
    SCOPED_TRACE(n);
    EXPECT_EQ(find_kernel(n), nullptr) << "variants are never in kernels(), so select() never dispatches one";
    const KernelInfo v = kernel_or_variant(n);
    EXPECT_EQ(v.name, n);
    EXPECT_FALSE(v.description.empty());
    const KernelInfo* base = find_kernel(n.substr(0, n.find('/')));
    ASSERT_NE(base, nullptr);
    // (wgmma/carry=on is built for the 64/64 and 128/128 classes, which hold every d here; wgmma/stages=<n> for the
    // 64/64 class only, as its description says: it takes exactly the base's problems with d, dv <= 64.)
    const bool d64_only = n.rfind("wgmma/stages=", 0) == 0;
    for (const AttnProblem& p : problems())
      EXPECT_EQ(bool(v.supports(sm90(), p)), bool(base->supports(sm90(), p)) && (!d64_only || (p.d <= 64 && p.dv <= 64)))
          << "d=" << p.d << " sq=" << p.sq;
  }
  EXPECT_EQ(kernel_or_variant("mma").name, "mma") << "production kernels resolve to themselves";
}

TEST(Variants, NamesAreCanonical) {
  EXPECT_EQ(find_variant("mma/rescale=lazy,order=rows").name, "mma/order=rows,rescale=lazy");
  EXPECT_EQ(find_variant("mma/classes=coarse").name, "mma/classes=coarse");
  EXPECT_EQ(find_variant("mma/classes=coarse,order=heads").name, "mma/order=heads,classes=coarse");
  EXPECT_EQ(find_variant("mma/small=fma").name, "mma/small=fma");
  EXPECT_EQ(find_variant("mma/small=plain,order=rows").name, "mma/order=rows,small=plain");
  EXPECT_EQ(find_variant("mma/small=fma,classes=coarse").name, "mma/classes=coarse,small=fma");
  EXPECT_EQ(find_variant("mma/small=c32").name, "mma/small=c32");
  EXPECT_EQ(find_variant("mma/small=occ").name, "mma/small=occ");
  EXPECT_EQ(find_variant("mma/small=occ,classes=coarse").name, "mma/classes=coarse,small=occ");
  EXPECT_EQ(find_variant("wgmma/blocks=7").name, "wgmma/blocks=7");
  EXPECT_EQ(find_variant("wgmma/blocks=7").name, wgmma_with_blocks(7).name);
  EXPECT_EQ(find_variant("wgmma/grid=full").name, "wgmma/grid=full");
  EXPECT_EQ(find_variant("wgmma/blocks=3,l2ahead=on").name, "wgmma/l2ahead=on,blocks=3");
  EXPECT_EQ(find_variant("wgmma/blocks=2,epilogue=pairs").name, "wgmma/epilogue=pairs,blocks=2");
  EXPECT_EQ(find_variant("wgmma/blocks=2,mask=visible").name, "wgmma/mask=visible,blocks=2");
  EXPECT_EQ(find_variant("wgmma/grid=full,mask=visible").name, "wgmma/mask=visible,grid=full");
  EXPECT_EQ(find_variant("wgmma/blocks=2,stages=5").name, "wgmma/stages=5,blocks=2");
  EXPECT_EQ(find_variant("wgmma/blocks=2,align=sector").name, "wgmma/align=sector,blocks=2");
  AttnProblem p = problems().front();
  EXPECT_EQ(find_variant("decode/splits=3").name, "decode/splits=3");
  EXPECT_EQ(find_variant("decode/splits=3").workspace_bytes(p), decode_with_splits(3).workspace_bytes(p));
  EXPECT_EQ(find_variant("decode/walk=2,fused=on").name, "decode/fused=on,walk=2");
  EXPECT_EQ(find_variant("decode/fused=on,splits=3").name, "decode/splits=3,fused=on");
  EXPECT_EQ(find_variant("decode/fused=on,walk=2").with_splits(5).name, "decode/splits=5,fused=on,walk=2");
  EXPECT_EQ(find_variant("decode/fused=on").with_splits(5).name, "decode/splits=5,fused=on");
  EXPECT_EQ(decode_with_splits(4).with_splits(5).name, "decode/splits=5");
  EXPECT_EQ(find_kernel("decode")->with_splits(5).name, "decode/splits=5");
  EXPECT_EQ(find_variant("decode/combine=pdl,plan=half").name, "decode/plan=half,combine=pdl");
  EXPECT_EQ(find_variant("decode/combine=wide,splits=3").name, "decode/splits=3,combine=wide");
  EXPECT_EQ(find_variant("decode/plan=half,combine=pdl").with_splits(5).name, "decode/splits=5,combine=pdl")
      << "a forced count replaces the plan";
  EXPECT_EQ(find_variant("decode/combine=wide").with_splits(5).name, "decode/splits=5,combine=wide");
  EXPECT_EQ(find_variant("decode/depth=3,combine=pdl,plan=half").name, "decode/plan=half,combine=pdl,depth=3");
  EXPECT_EQ(find_variant("decode/depth=3").with_splits(5).name, "decode/splits=5,depth=3");
  EXPECT_EQ(find_variant("decode/combine=wide,plan=full").name, "decode/plan=full,combine=wide");
  EXPECT_EQ(find_variant("decode/plan=full").with_splits(5).name, "decode/splits=5");
  EXPECT_EQ(find_variant("decode/mma=on").name, "decode/mma=on");
  EXPECT_EQ(find_variant("decode/mma=on,splits=3").name, "decode/splits=3,mma=on");
  EXPECT_EQ(find_variant("decode/mma=on").with_splits(5).name, "decode/splits=5,mma=on");
}

// decode/mma=on takes decode_mma_splits' count where the tensor-core kernel takes the problem (GQA
// groups up to 16 rows, d <= 128, no score transform) and decode's elsewhere, with decode's
// workspace layout (the partials of that count): its combine is decode's.
TEST(Variants, DecodeMmaTakesItsPlanWhereItTakesTheProblemAndDecodesElsewhere) {
  using testing::make_problem;
  for (const AttnProblem& p : {make_problem(1, 32, 8, 1, 4096, 128), make_problem(8, 32, 4, 1, 32768, 128),
                               make_problem(1, 32, 8, 1, 1024, 64), make_problem(1, 32, 32, 1, 4096, 128)}) {
    const int n = decode_default_mma_splits(p);
    EXPECT_EQ(n, decode_mma_splits(p, 0)) << p.id();
    EXPECT_EQ(find_variant("decode/mma=on").workspace_bytes(p), decode_with_splits(n).workspace_bytes(p)) << p.id();
  }
  AttnProblem wide = make_problem(1, 32, 1, 1, 4096, 128);  // 32 rows per kv head: more than one tile
  EXPECT_EQ(decode_default_mma_splits(wide), decode_default_splits(wide));
  AttnProblem cap = make_problem(1, 32, 8, 1, 4096, 128);
  cap.softcap = 30;
  EXPECT_EQ(decode_default_mma_splits(cap), decode_default_splits(cap));
  EXPECT_EQ(find_variant("decode/splits=7,mma=on").workspace_bytes(cap), decode_with_splits(7).workspace_bytes(cap));
}

// decode's plan is decode_plan_splits' (on this host, with no device, the nominal H100's): half the
// resident blocks for one-row blocks (h32/32), a full wave for several rows (h32/8, h32/4);
// decode/plan=half takes decode_fused_splits' count and decode/plan=full decode_splits' at any rows
// per block; the combines and the depth take the plan's count and decode's workspace: the choice
// changes the launch, never the partials' layout.
TEST(Variants, DecodePlanAndCombineVariantsTakeTheirSplitCountsAndDecodesWorkspace) {
  using testing::make_problem;
  for (const AttnProblem& p :
       {make_problem(1, 32, 32, 1, 4096, 128), make_problem(8, 32, 8, 1, 32768, 128), make_problem(1, 32, 4, 1, 1024, 64)}) {
    const int half = decode_default_fused_splits(p), full = decode_default_full_wave_splits(p);
    ASSERT_LT(half, full) << p.hkv << " " << p.d;
    EXPECT_EQ(decode_default_splits(p), p.hkv == p.hq ? half : full) << p.hkv << " " << p.d;
    EXPECT_EQ(find_variant("decode/plan=half").workspace_bytes(p), decode_with_splits(half).workspace_bytes(p));
    EXPECT_EQ(find_variant("decode/plan=full").workspace_bytes(p), decode_with_splits(full).workspace_bytes(p));
    EXPECT_EQ(find_variant("decode/plan=half,combine=pdl").workspace_bytes(p), decode_with_splits(half).workspace_bytes(p));
    EXPECT_EQ(find_variant("decode/combine=pdl").workspace_bytes(p), decode_with_splits(decode_default_splits(p)).workspace_bytes(p));
    EXPECT_EQ(find_variant("decode/combine=wide").workspace_bytes(p), find_kernel("decode")->workspace_bytes(p));
    EXPECT_EQ(find_variant("decode/depth=3").workspace_bytes(p), find_kernel("decode")->workspace_bytes(p));
  }
}

// decode/fused=on's workspace: the split kernel's partials, then one 32-bit arrival counter per row
// tile of the batch when a row tile has more than one block (a walk of fewer splits than the count).
TEST(Variants, DecodeFusedWorkspaceAddsArrivalCountersOnlyWhereBlocksShareARowTile) {
  AttnProblem p = problems().front();  // b2 h4/2 (group 2: one tile of 2 rows per kv head), sq 1
  ASSERT_EQ(p.sq, 1);
  const std::size_t partials = decode_with_splits(3).workspace_bytes(p);
  EXPECT_EQ(partials, std::size_t{2} * 4 * 1 * 3 * (p.dv + 1) * 4);
  EXPECT_EQ(find_variant("decode/splits=3,fused=on,walk=1").workspace_bytes(p), partials + 2 * 2 * 4);
  EXPECT_EQ(find_variant("decode/splits=3,fused=on,walk=2").workspace_bytes(p), partials + 2 * 2 * 4);
  EXPECT_EQ(find_variant("decode/splits=3,fused=on,walk=3").workspace_bytes(p), partials);
  EXPECT_EQ(find_variant("decode/splits=3,fused=on,walk=9").workspace_bytes(p), partials) << "a walk above the count walks them all";
}

TEST(Variants, UnknownNamesAreUsageErrorsNamingWhatIsAllowed) {
  for (const std::string bad :
       {"mma/order=diagonal", "mma/order=auto", "mma/rescale=always", "mma/tile=64", "tiled/splits=2", "mma/",
        "mma/order", "mma/=rows", "mma/order=", "mma/order=rows,order=heads", "mma/order=rows,", "decode/splits=0",
        "decode/splits=-1", "decode/splits=1e3", "decode/splits=70000", "decode/splits=", "wgmma/blocks=0",
        "wgmma/grid=persistent", "wgmma/grid=full,blocks=2", "wgmma/schedule=pingpong", "wgmma/schedule=fast", "wgmma/carry=off", "wgmma/carry=",
        "wgmma/carry=on,schedule=serial", "wgmma/l2ahead=off", "wgmma/l2ahead=", "wgmma/l2ahead=on,carry=on",
        "wgmma/l2ahead=on,schedule=overlap", "wgmma/epilogue=smem", "wgmma/epilogue=", "wgmma/epilogue=vec16", "wgmma/epilogue=pairs,l2ahead=on",
        "wgmma/epilogue=pairs,carry=on", "wgmma/epilogue=pairs,schedule=serial", "wgmma/mask=", "wgmma/mask=affine",
        "wgmma/mask=visible,l2ahead=on", "wgmma/mask=visible,epilogue=pairs", "wgmma/mask=visible,carry=on",
        "wgmma/mask=visible,schedule=overlap", "wgmma/mask=visible,mask=visible", "wgmma/classes=coarse", "wgmma/classes=",
        "wgmma/classes=fine,epilogue=pairs", "wgmma/classes=fine,mask=visible", "wgmma/stages=3", "wgmma/stages=6", "wgmma/stages=",
        "wgmma/stages=four", "wgmma/stages=4,mask=visible", "wgmma/stages=4,l2ahead=on", "wgmma/stages=5,classes=fine",
        "wgmma/stages=4,stages=5", "wgmma/align=", "wgmma/align=row", "wgmma/align=sector,mask=visible",
        "wgmma/align=sector,classes=fine", "wgmma/align=sector,epilogue=pairs", "wgmma/align=sector,stages=4", "mma/classes=fine", "mma/classes=", "mma/classes=coarse,classes=coarse",
        "mma/small=on", "mma/small=", "mma/small=fma3", "mma/small=fma,small=plain",
        "decode/fused=off", "decode/fused=", "decode/walk=2", "decode/splits=2,walk=2", "decode/fused=on,walk=0", "decode/fused=on,walk=x",
        "decode/fused=on,fused=on", "decode/fused=on,blocks=2", "decode/plan=quarter", "decode/plan=", "decode/plan=half,splits=8", "decode/plan=full,splits=8",
        "decode/plan=half,plan=full",
        "decode/combine=loop", "decode/combine=", "decode/combine=pdl,fused=on", "decode/combine=wide,combine=pdl", "decode/depth=2",
        "decode/depth=4", "decode/depth=", "decode/depth=3,fused=on", "decode/depth=3,depth=3",
        "decode/mma=off", "decode/mma=", "decode/mma=on,mma=on", "decode/mma=on,fused=on", "decode/mma=on,plan=half",
        "decode/mma=on,plan=full", "decode/mma=on,combine=pdl", "decode/mma=on,depth=3", "decode/mma=on,walk=2"}) {
    const std::string m = usage_error(bad);
    EXPECT_NE(m.find("'" + bad + "'"), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("mma/order=rows|heads"), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("decode/splits=<n>"), std::string::npos) << bad << ": " << m;
  }
  const std::string m = usage_error("flash");
  EXPECT_NE(m.find("'flash'"), std::string::npos) << m;
  EXPECT_NE(m.find(kernel_names()), std::string::npos) << "names this build's kernels: " << m;
  EXPECT_NE(m.find("mma/order=rows|heads"), std::string::npos) << "and the variants: " << m;
}

// wgmma/carry=on, wgmma/l2ahead=on and wgmma/epilogue=pairs refuse what they are not built for, each
// naming itself and why; the rest is wgmma's.
TEST(Variants, WgmmaCarryAndL2AheadTakeTheD64AndD128ClassesWithoutScoreTransforms) {
  const std::vector<std::string> built = variant_names();
  for (const std::string name : {"wgmma/carry=on", "wgmma/l2ahead=on", "wgmma/epilogue=pairs", "wgmma/mask=visible", "wgmma/align=sector"}) {
    if (std::find(built.begin(), built.end(), name) == built.end()) continue;  // carry=on: WgmmaSchedulesAndCarryExistWhereBuilt
    SCOPED_TRACE(name);
    const KernelInfo v = find_variant(name);
    AttnProblem p = problems().front();  // d = 64
    ASSERT_EQ(p.d, 64);
    for (auto [d, dv] : {std::pair{64, 64}, std::pair{40, 40}, std::pair{128, 128}, std::pair{96, 128}, std::pair{128, 64}}) {
      p.d = d;
      p.dv = dv;
      EXPECT_EQ(bool(v.supports(sm90(), p)), bool(find_kernel("wgmma")->supports(sm90(), p))) << d << "/" << dv;
    }
    // Its own refusals come before wgmma's (which, in a build without sm_90a code, refuses everything).
    p.d = 192;
    p.dv = 128;
    Support s = v.supports(sm90(), p);
    EXPECT_FALSE(s);
    EXPECT_NE(s.reason.find("d=192"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find(name), std::string::npos) << s.reason;
    p.d = p.dv = 64;
    p.softcap = 30;
    s = v.supports(sm90(), p);
    EXPECT_FALSE(s);
    EXPECT_NE(s.reason.find("softcap"), std::string::npos) << s.reason;
    p.softcap = 0;
    p.alibi_slopes.assign(static_cast<std::size_t>(p.hq), 0.5);
    s = v.supports(sm90(), p);
    EXPECT_FALSE(s);
    EXPECT_NE(s.reason.find("ALiBi"), std::string::npos) << s.reason;
    EXPECT_FALSE(v.supports(DeviceInfo{}, problems().front())) << "no device: refused as wgmma is";
  }
}

// wgmma/stages=<n> (4 or 5 K/V stages) is built at the 64/64 class without score transforms, with the
// affine mask: elsewhere it refuses naming itself and why; in its domain it is wgmma's.
TEST(Variants, WgmmaStagesTakeTheD64ClassWithTheAffineMask) {
  for (const std::string name : {"wgmma/stages=4", "wgmma/stages=5"}) {
    SCOPED_TRACE(name);
    const KernelInfo v = find_variant(name);
    const KernelInfo* w = find_kernel("wgmma");
    ASSERT_NE(w, nullptr);
    for (int d : {8, 32, 64}) {
      AttnProblem p = problems().front();
      p.d = p.dv = d;
      EXPECT_EQ(bool(v.supports(sm90(), p)), bool(w->supports(sm90(), p))) << d;
    }
    AttnProblem wide = problems().front();
    wide.d = wide.dv = 72;
    Support s = v.supports(sm90(), wide);
    EXPECT_FALSE(s);
    EXPECT_NE(s.reason.find(name + " is built for the 64/64 tile class only"), std::string::npos) << s.reason;
    AttnProblem capped = problems().front();
    capped.d = capped.dv = 64;
    capped.softcap = 30;
    s = v.supports(sm90(), capped);
    EXPECT_FALSE(s);
    EXPECT_NE(s.reason.find("softcap/ALiBi: " + name), std::string::npos) << s.reason;
    AttnProblem longer = problems().front();
    longer.d = longer.dv = 64;
    longer.sq = kMaxLen32 / 2;
    longer.sk = kMaxLen32 - longer.sq + 1;
    s = v.supports(sm90(), longer);
    EXPECT_FALSE(s);
    EXPECT_NE(s.reason.find(std::to_string(kMaxLen32)), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find(name), std::string::npos) << s.reason;
  }
}

// wgmma/align=sector is built for the 160/160 and 256/256 classes too (the d % 16 == 8 dips are there
// as well), not for 192/128: there it refuses, naming itself; elsewhere it is wgmma.
TEST(Variants, WgmmaAlignSectorTakesEveryClassButMla) {
  const KernelInfo v = find_variant("wgmma/align=sector");
  AttnProblem p = problems().front();
  for (auto [d, dv] : {std::pair{136, 136}, std::pair{160, 160}, std::pair{168, 168}, std::pair{256, 256}, std::pair{64, 136},
                       std::pair{152, 144}, std::pair{8, 8}}) {
    p.d = d;
    p.dv = dv;
    EXPECT_EQ(bool(v.supports(sm90(), p)), bool(find_kernel("wgmma")->supports(sm90(), p))) << d << "/" << dv;
    if (const Support s = v.supports(sm90(), p); !s) EXPECT_EQ(s.reason.find("wgmma/align=sector"), std::string::npos) << s.reason;
  }
  p.d = 184;
  p.dv = 120;
  const Support s = v.supports(sm90(), p);
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("192/128"), std::string::npos) << s.reason;
  // At 64/64 and 128/128 it is built with the shipped (affine) mask: rows and keys past 32 bits are
  // refused there, naming the sizes and the bound; the 160/160 class has no such bound.
  p.d = p.dv = 120;
  p.sq = kMaxLen32 / 2;
  p.sk = kMaxLen32 - p.sq;
  EXPECT_EQ(bool(v.supports(sm90(), p)), bool(find_kernel("wgmma")->supports(sm90(), p)));
  p.sk += 1;
  const Support r = v.supports(sm90(), p);
  EXPECT_FALSE(r);
  EXPECT_NE(r.reason.find("sk=" + std::to_string(p.sk)), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find(std::to_string(kMaxLen32)), std::string::npos) << r.reason;
  p.d = p.dv = 136;
  EXPECT_EQ(bool(v.supports(sm90(), p)), bool(find_kernel("wgmma")->supports(sm90(), p)));
}

TEST(Variants, WgmmaSchedulesAndCarryExistWhereBuilt) {
  const std::vector<std::string> names = variant_names();
  const bool built = std::find(names.begin(), names.end(), "wgmma/schedule=serial") != names.end();
  EXPECT_EQ(built, std::find(names.begin(), names.end(), "wgmma/schedule=overlap") != names.end());
  EXPECT_EQ(built, std::find(names.begin(), names.end(), "wgmma/carry=on") != names.end());
  if (built) {
    EXPECT_EQ(find_variant("wgmma/grid=full,schedule=overlap").name, "wgmma/schedule=overlap,grid=full");
    EXPECT_EQ(find_variant("wgmma/blocks=3,carry=on").name, "wgmma/carry=on,blocks=3");
  } else {
    for (const std::string v : {"wgmma/schedule=serial", "wgmma/carry=on"}) {
      const std::string m = usage_error(v);
      EXPECT_NE(m.find("-DFLASHPROBE_WGMMA_SCHEDULES=ON"), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace flashprobe::kernels
