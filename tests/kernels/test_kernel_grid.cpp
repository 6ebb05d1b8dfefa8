// The GPU grid itself, checked on the CPU: every case is a valid problem and the grid covers every
// feature and edge value the kernels issue requires (so the GPU run cannot silently shrink).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "flashprobe/gate/stand_in_device.h"
#include "flashprobe/kernels/decode_plan.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/variants.h"
#include "kernel_grid.h"

namespace flashprobe::kernels::testing {
namespace {

TEST(KernelGrid, EveryCaseIsValidAndUnique) {
  std::set<std::string> ids;
  for (auto& c : kernel_grid())
    for (DType t : {DType::f16, DType::bf16, DType::f32}) {
      const AttnProblem p = c.with_dtype(t);
      EXPECT_FALSE(has_errors(validate(p))) << c.id(t);
      EXPECT_TRUE(ids.insert(c.id(t)).second) << "duplicate case " << c.id(t);
    }
}

TEST(KernelGrid, CoversTheRequiredEdges) {
  const auto& g = kernel_grid();
  auto any = [&](auto pred) { return std::any_of(g.begin(), g.end(), [&](const GridCase& c) { return pred(c.p); }); };
  for (int sk : kGridSk) EXPECT_TRUE(any([&](const AttnProblem& p) { return p.sk == sk; })) << "sk=" << sk;
  for (int sq : {2, 5, 9, 15, 31, 33, 63, 127, 129, 300}) EXPECT_TRUE(any([&](const AttnProblem& p) { return p.sq == sq; })) << "sq=" << sq;
  for (int d : {64, 80, 96, 128, 256}) EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == d; })) << "d=" << d;
  // Every head dim of the tensor-core paths (registry.h), in a problem of more than one mma query
  // block, and d != dv with each side the wider one.
  for (int d = kHeadDimStep; d <= kMmaDimClasses[std::size(kMmaDimClasses) - 1].d; d += kHeadDimStep)
    EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == d && p.dv == d && p.sq > 128; })) << "d=" << d;
  for (const auto& dims : {std::pair{192, 128}, std::pair{160, 128}, std::pair{128, 192}, std::pair{40, 72}}) {
    const int d = dims.first, dv = dims.second;  // not a structured binding: ROCm 5.2's clang cannot capture one
    EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == d && p.dv == dv; })) << "d=" << d << ", dv=" << dv;
  }
  // Every wgmma tile class wider than 128 (64-key tiles) with keys one short of and one past a 64-key edge.
  for (const HeadDimClass& w : kWgmmaFineDimClasses)
    for (int sk : {63, 65, 193})
      if (w.d > 128)
        EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == w.d && p.dv == w.dv && p.sk == sk; }))
            << "wgmma class " << w.d << "/" << w.dv << " sk " << sk;
  // Every wgmma tile class over three query blocks and more key tiles than its ring has stages.
  for (const HeadDimClass& w : kWgmmaFineDimClasses)
    EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == w.d && p.dv == w.dv && p.sq > 256 && p.sk > 512; }))
        << "wgmma class " << w.d << "/" << w.dv;
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.d != p.dv && p.d % 8 == 0 && p.k.s % 8 != 0; }))
      << "a head dim below its class with element-wise (unaligned) K and V loads";
  EXPECT_TRUE(any([](const AttnProblem& p) { return head_dim_class(kMmaDimClasses, p.d, p.dv).d != p.d && p.softcap > 0; }))
      << "soft-cap with a head dim below its class";
  // mma's fine ladder: its classes outside kMmaDimClasses, with soft-cap (run in kMmaDimClasses) and
  // with element-wise K/V loads.
  const auto fine_only = [](const AttnProblem& p) {
    return !mma_specialised_class(head_dim_class(kMmaFineDimClasses, p.d, p.dv).d);
  };
  EXPECT_TRUE(any([&](const AttnProblem& p) { return fine_only(p) && p.softcap > 0; })) << "soft-cap in a fine-only class";
  EXPECT_TRUE(any([&](const AttnProblem& p) { return fine_only(p) && p.k.s % 8 != 0 && p.d != p.dv; }))
      << "element-wise loads in a fine-only class";
  // The head-dim tail's mutants (scripts/gpu/mma-tail-mutants) in each of those classes: a k-step of S
  // half past d (d % 16 == 8), an O tile pair half past dv, and dv below the class with 16-byte rows
  // (a store past dv), each in more than one query block.
  for (const HeadDimClass& c : kMmaFineDimClasses) {
    if (mma_specialised_class(c.d)) continue;
    const auto in_c = [&](const AttnProblem& p) { return head_dim_class(kMmaFineDimClasses, p.d, p.dv) == c && p.sq > 128; };
    EXPECT_TRUE(any([&](const AttnProblem& p) { return in_c(p) && p.d % 16 == 8; })) << c.d << ": d half a k-step past";
    EXPECT_TRUE(any([&](const AttnProblem& p) { return in_c(p) && p.dv % 16 == 8; })) << c.d << ": dv half an O pair past";
    EXPECT_TRUE(any([&](const AttnProblem& p) { return in_c(p) && p.dv < c.dv && p.dv % 8 == 0 && p.o.is_zero(); }))
        << c.d << ": dv below the class, packed O rows";
  }
  // The small head dims (mma's 32 class; class 64's tail below 64) at the 128-row and 64-key tile edges.
  for (int d : {32, 48}) {
    EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == d && p.dv == d && p.sq == 127 && p.sk == 64; })) << "d=" << d;
    EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == d && p.dv == d && p.sq == 129 && p.sk == 65; })) << "d=" << d;
    EXPECT_TRUE(any([&](const AttnProblem& p) { return p.d == d && p.dv == d && p.sq > 256 && p.sk % 64 == 63 && p.causal != Causal::none; }))
        << "d=" << d;
  }
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.hkv >= 2 && p.group() == 3; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.hkv >= 2 && p.group() == 6; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.kv_offset > 0 && p.sq <= 8; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.kv_offset > 0 && p.sq > 8; }));
  EXPECT_TRUE(any([](const AttnProblem& p) {
    return std::find(p.seqlens_k.begin(), p.seqlens_k.end(), 0) != p.seqlens_k.end();
  }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.window_left >= 0 && p.window_right >= 0; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.softcap > 0; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return !p.alibi_slopes.empty(); }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.causal == Causal::top_left && p.sq > p.sk; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.q == p.k && !p.q.is_zero(); }));  // fused QKV
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.id().find("_bhsd") != std::string::npos; }));
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.sk >= 1000; }));
  // Diagonal and window edges on a 64-key tile edge at the last / first row of a 32-row warp.
  for (int r : {0, 32})
    EXPECT_TRUE(any([&](const AttnProblem& p) {
      return p.causal == Causal::bottom_right && p.window_left < 0 && p.sq >= 64 && ((p.sk - p.sq + 63 - r) % 64 + 64) % 64 == 0;
    })) << "last row of a warp at row 64k + " << 63 - r << " sees up to a tile's first key";
  for (int r : {0, 32})
    EXPECT_TRUE(any([&](const AttnProblem& p) {
      return p.window_left >= 0 && p.sq > 64 && ((p.sk - p.sq + r - p.window_left) % 64 + 64) % 64 == 63;
    })) << "first row of a warp at row 64k + " << r << " starts at a tile's last key";
  EXPECT_TRUE(any([](const AttnProblem& p) { return p.k.h % 8 != 0 && p.sq == 1; }));  // K rows off 16-byte alignment
}

// The grid's problems (f16 and bf16) a kernel takes on dev: what KernelGrid runs there.
std::vector<AttnProblem> grid_run(const KernelInfo& k, const DeviceInfo& dev) {
  std::vector<AttnProblem> ran;
  for (const GridCase& c : kernel_grid())
    for (DType t : {DType::f16, DType::bf16})
      if (k.supports(dev, c.with_dtype(t))) ran.push_back(c.with_dtype(t));
  return ran;
}

// wgmma as it is where built: this tree may hold no sm_90a code, and then wgmma refuses everything.
KernelInfo wgmma_built(const std::string& name) {
  KernelInfo k = kernel_or_variant(name);
  const bool fine = name != "wgmma";
  k.supports = [fine](const DeviceInfo&, const AttnProblem& p) {
    return wgmma_class(p.d, p.dv, fine) ? Support::yes() : Support::no("outside wgmma's classes");
  };
  return k;
}

std::map<std::string, int> cases_per_path(const KernelInfo& k, const DeviceInfo& dev, const std::vector<AttnProblem>& ran) {
  std::map<std::string, int> m;
  for (const GridPath& g : grid_paths(k, dev, ran)) m[g.name] = g.cases;
  return m;
}

// Every path of mma, wgmma and decode, the newest included (wgmma's 160/160 and 256/256, mma's 32/32,
// decode's half-wave plan), runs grid cases on the devices it is built for; KernelGrid fails a
// kernel where one of them runs none.
TEST(KernelGrid, EveryClassAndPlanOfTheKernelsRunsCasesOnItsDevices) {
  const DeviceInfo h100 = gate::stand_in_h100();
  for (const DeviceInfo& dev : {h100, gate::stand_in_device("amd", "gfx1100", 0, 32), gate::stand_in_device("amd", "gfx942", 0, 64)})
    for (const char* name : {"mma", "mma/classes=coarse", "decode"}) {
      const KernelInfo k = kernel_or_variant(name);
      const auto paths = cases_per_path(k, dev, grid_run(k, dev));
      EXPECT_GE(paths.size(), 2u) << name << " on " << dev.arch;
      for (const auto& [path, n] : paths) EXPECT_GT(n, 0) << name << " on " << dev.arch << ": " << path;
    }
  EXPECT_TRUE(cases_per_path(*find_kernel("mma"), h100, {}).count("class 32/32"));
  EXPECT_TRUE(cases_per_path(*find_kernel("decode"), h100, {}).count("plan half (one-row blocks)"));
  EXPECT_FALSE(cases_per_path(*find_kernel("mma"), gate::stand_in_device("amd", "gfx942", 0, 64), {}).count("class 80/80"))
      << "mma takes no d = 80 on CDNA: not a path there";
  for (const char* name : {"wgmma", "wgmma/classes=fine"}) {
    const KernelInfo k = wgmma_built(name);
    const auto paths = cases_per_path(k, h100, grid_run(k, h100));
    EXPECT_EQ(paths.size(), std::string(name) == "wgmma" ? std::size(kWgmmaDimClasses) : std::size(kWgmmaFineDimClasses));
    for (const char* c : {"class 160/160", "class 256/256", "class 192/128"}) EXPECT_GT(paths.count(c) ? paths.at(c) : 0, 0) << name << ": " << c;
    for (const auto& [path, n] : paths) EXPECT_GT(n, 0) << name << ": " << path;
  }
  EXPECT_TRUE(grid_paths(*find_kernel("tiled"), h100, grid_run(*find_kernel("tiled"), h100)).empty());
}

// A class or plan that ran nothing is there with 0 cases (and fails the GPU grid), not left out.
TEST(KernelGrid, APathThatRanNothingIsNamedWithZeroCases) {
  const DeviceInfo h100 = gate::stand_in_h100();
  const KernelInfo w = wgmma_built("wgmma");
  std::vector<AttnProblem> narrow;
  for (const AttnProblem& p : grid_run(w, h100))
    if (p.d <= 128 && p.dv <= 128) narrow.push_back(p);
  const auto paths = cases_per_path(w, h100, narrow);
  EXPECT_EQ(paths.at("class 160/160"), 0);
  EXPECT_EQ(paths.at("class 256/256"), 0);
  EXPECT_EQ(paths.at("class 192/128"), 0);
  EXPECT_GT(paths.at("class 128/128"), 0);
  std::vector<AttnProblem> gqa;
  for (const AttnProblem& p : grid_run(*find_kernel("decode"), h100))
    if (!decode_plan_half(p)) gqa.push_back(p);
  EXPECT_EQ(cases_per_path(*find_kernel("decode"), h100, gqa).at("plan half (one-row blocks)"), 0);
}

}  // namespace
}  // namespace flashprobe::kernels::testing
