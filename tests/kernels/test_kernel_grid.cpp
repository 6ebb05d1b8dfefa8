// The GPU grid itself, checked on the CPU: every case is a valid problem and the grid covers every
// feature and edge value the kernels issue requires (so the GPU run cannot silently shrink).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "flashprobe/kernels/registry.h"
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

}  // namespace
}  // namespace flashprobe::kernels::testing
