// What the mma kernel derives from an atom's layout at compile time: the lanes that share a row of
// C (its row-reduction shuffles), the local row of each C slot, and whether P can be reused from the
// C fragment as the A operand in registers. Checked per atom against hand-worked values, so a layout
// edit that would silently change the kernel's reductions fails here first.
#include <gtest/gtest.h>

#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/atoms/sm80_layout.h"
#include "flashprobe/atoms/sm90_wgmma_layout.h"

using namespace flashprobe::atoms;

TEST(AtomDerivations, Sm80RowsAreSharedByTheFourLanesOfAGroup) {
  constexpr auto r = derive_c_rows<SM80_16x8x16_Layout>();
  static_assert(r.consistent);
  EXPECT_EQ(r.rows, 2);           // rows groupID and groupID + 8
  EXPECT_EQ(r.lane_mask, 0b11);   // lanes 4g .. 4g+3: shuffle-xor 1 and 2
  EXPECT_EQ(r.local[0], r.local[1]);
  EXPECT_EQ(r.local[2], r.local[3]);
  EXPECT_NE(r.local[0], r.local[2]);
}

TEST(AtomDerivations, Sm80PReusesTheAccumulatorsInRegisters) {
  constexpr auto c2a = derive_c_to_a<SM80_16x8x16_Layout>();
  static_assert(c2a.in_place);
  // a_i of P's k-step comes from C tile (i >> 2) and slot (i & 3): the FlashAttention-2 identity.
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(c2a.tile[i], i >> 2) << i;
    EXPECT_EQ(c2a.slot[i], i & 3) << i;
  }
}

TEST(AtomDerivations, Gfx11RowsSpanHalfAWaveAndPNeedsSharedMemory) {
  constexpr auto r = derive_c_rows<GFX11_WMMA_16x16x16_Layout>();
  static_assert(r.consistent);
  EXPECT_EQ(r.rows, 8);
  EXPECT_EQ(r.lane_mask, 0b1111);  // lanes 0-15 hold even rows, 16-31 odd rows
  EXPECT_FALSE(derive_c_to_a<GFX11_WMMA_16x16x16_Layout>().in_place);
}

TEST(AtomDerivations, Gfx12AndCdnaRows) {
  constexpr auto g12 = derive_c_rows<GFX12_WMMA_16x16x16_Layout>();
  static_assert(g12.consistent);
  EXPECT_EQ(g12.rows, 8);
  EXPECT_EQ(g12.lane_mask, 0b1111);
  constexpr auto mf = derive_c_rows<CDNA_MFMA_32x32x8_Layout>();
  static_assert(mf.consistent);
  EXPECT_EQ(mf.rows, 16);
  EXPECT_EQ(mf.lane_mask, 0b11111);  // 32 lanes share a row: lanes 0-31 and 32-63 hold other rows
  EXPECT_FALSE(derive_c_to_a<CDNA_MFMA_32x32x8_Layout>().in_place);
  EXPECT_FALSE(derive_c_to_a<GFX12_WMMA_16x16x16_Layout>().in_place);
}

// wgmma (the wgmma attention kernel): a thread holds two rows of S (g and g + 8 of its warp's 16),
// shared by the four lanes of its group; P for k-step ks of P·V is accumulator slots 8ks..8ks+7 of
// the same thread, so the 64 x 128 score tile feeds the register (RS) form without shared memory.
TEST(AtomDerivations, WgmmaRowsAndPInRegistersAcrossKSteps) {
  using S = SM90_64xNx16_Layout<128>;
  constexpr auto r = derive_c_rows<S>();
  static_assert(r.consistent);
  EXPECT_EQ(r.rows, 2);
  EXPECT_EQ(r.lane_mask, 0b11);
  for (int q = 0; q < S::kC; ++q) EXPECT_EQ(r.local[q], (q >> 1) & 1) << q;
  constexpr auto w = derive_wide_c_to_a<SM90_64xNx16_Layout<64>, S>();
  static_assert(w.in_place);
  static_assert(w.kSteps == 8);
  for (int ks = 0; ks < w.kSteps; ++ks)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(w.slot[ks][i], 8 * ks + i) << ks << "," << i;
  // N = 256 needs the 128-slot tables. Checked at run time: hipcc's clang hits its constexpr step
  // limit on this one at compile time (gcc and nvcc do not).
  EXPECT_TRUE(derive_c_rows<SM90_64xNx16_Layout<256>>().consistent);
}

// A C layout whose columns are rotated by one lane group is no longer reusable in place.
struct RotatedWgmmaC : SM90_64xNx16_Layout<64> {
  static constexpr Coord c(int lane, int i) {
    const Coord x = SM90_64xNx16_Layout<64>::c(lane, i);
    return {x.row, (x.col + 2) % 64};
  }
};
TEST(AtomDerivations, WideCToARejectsAShiftedAccumulatorLayout) {
  EXPECT_FALSE((derive_wide_c_to_a<SM90_64xNx16_Layout<64>, RotatedWgmmaC>().in_place));
  EXPECT_FALSE((derive_wide_c_to_a<SM80_16x8x16_Layout, SM90_64xNx16_Layout<64>>().in_place));  // other wave
}

// A deliberately broken layout: lane 0 holds one row in all its slots, lane 4 four different rows,
// so no per-slot row state and no shuffle tree fits every lane.
struct BrokenLayout {
  static constexpr int M = 16, N = 8, K = 16, kWave = 32, kA = 8, kB = 4, kC = 4;
  static constexpr Coord a(int lane, int i) { return SM80_16x8x16_Layout::a(lane, i); }
  static constexpr Coord b(int lane, int i) { return SM80_16x8x16_Layout::b(lane, i); }
  static constexpr Coord c(int lane, int i) { return {(lane + (lane >> 2) * i) % 16, 2 * (lane & 3) + (i & 1)}; }
};

TEST(AtomDerivations, InconsistentRowStructureIsDetected) {
  constexpr auto r = derive_c_rows<BrokenLayout>();
  EXPECT_FALSE(r.consistent);
  EXPECT_FALSE(derive_c_to_a<BrokenLayout>().in_place);
}

TEST(AtomDerivations, EveryLayoutCoversItsTilesExactlyOnce) {
  auto covers = [](auto layout, int rows, int cols, int slots, auto f) {
    std::vector<int> hit(static_cast<std::size_t>(rows * cols), 0);
    for (int l = 0; l < decltype(layout)::kWave; ++l)
      for (int s = 0; s < slots; ++s) {
        const Coord c = f(l, s);
        if (c.row < 0 || c.row >= rows || c.col < 0 || c.col >= cols) return false;
        ++hit[static_cast<std::size_t>(c.row * cols + c.col)];
      }
    const int expect = hit[0];
    for (int h : hit)
      if (h != expect) return false;
    return true;
  };
  using S = SM80_16x8x16_Layout;
  EXPECT_TRUE(covers(S{}, S::M, S::K, S::kA, S::a));
  EXPECT_TRUE(covers(S{}, S::K, S::N, S::kB, S::b));
  EXPECT_TRUE(covers(S{}, S::M, S::N, S::kC, S::c));
  using G = GFX11_WMMA_16x16x16_Layout;  // A/B twice (replicated lanes), C once
  EXPECT_TRUE(covers(G{}, G::M, G::K, G::kA, G::a));
  EXPECT_TRUE(covers(G{}, G::M, G::N, G::kC, G::c));
  using X = CDNA_MFMA_32x32x8_Layout;
  EXPECT_TRUE(covers(X{}, X::M, X::K, X::kA, X::a));
  EXPECT_TRUE(covers(X{}, X::K, X::N, X::kB, X::b));
  EXPECT_TRUE(covers(X{}, X::M, X::N, X::kC, X::c));
}

// The pipelined NVIDIA path of the mma kernel reads B fragments with ldmatrix: x4 from the K tile
// ([key][dim], n-major) and x4.trans from the V tile ([key][dim] = B[k][n], k-major).
TEST(AtomDerivations, LdmatrixFeedsSm80BFromBothTileOrientations) {
  using flashprobe::atoms::ldsm_feeds_b;
  using flashprobe::atoms::SM80_16x8x16_Layout;
  using N = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<false>;
  using T = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<true>;
  static_assert(ldsm_feeds_b<SM80_16x8x16_Layout, N, true>());
  static_assert(ldsm_feeds_b<SM80_16x8x16_Layout, T, false>());
  // The orientations are not interchangeable: plain ldmatrix from a k-major tile gives B^T.
  static_assert(!ldsm_feeds_b<SM80_16x8x16_Layout, N, false>());
  static_assert(!ldsm_feeds_b<SM80_16x8x16_Layout, T, true>());
  // Other atoms are refused (wrong shape or wave), so the kernel falls back to its generic loads.
  static_assert(!ldsm_feeds_b<flashprobe::atoms::GFX11_WMMA_16x16x16_Layout, N, true>());
  static_assert(!ldsm_feeds_b<flashprobe::atoms::CDNA_MFMA_32x32x8_Layout, T, false>());
  // A B layout that swaps the two halves of a register is caught.
  struct Swapped : SM80_16x8x16_Layout {
    static constexpr flashprobe::atoms::Coord b(int lane, int i) { return SM80_16x8x16_Layout::b(lane, i ^ 1); }
  };
  EXPECT_FALSE((ldsm_feeds_b<Swapped, N, true>()));
  EXPECT_FALSE((ldsm_feeds_b<Swapped, T, false>()));
}

// The mma kernel keeps Q in shared memory, row-major [row][dim], and reads the A fragment of
// each k-step with one ldmatrix.x4 (non-trans).
TEST(AtomDerivations, LdmatrixFeedsSm80AFromARowMajorTile) {
  using flashprobe::atoms::ldsm_feeds_a;
  using flashprobe::atoms::SM80_16x8x16_Layout;
  using N = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<false>;
  using T = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<true>;
  static_assert(ldsm_feeds_a<SM80_16x8x16_Layout, N>());
  // .trans would deliver A^T from the same tile.
  static_assert(!ldsm_feeds_a<SM80_16x8x16_Layout, T>());
  static_assert(!ldsm_feeds_a<flashprobe::atoms::GFX11_WMMA_16x16x16_Layout, N>());
  static_assert(!ldsm_feeds_a<flashprobe::atoms::CDNA_MFMA_32x32x8_Layout, N>());
  // A layout whose registers 1 and 2 (row-block 1 / k-block 1) are exchanged is caught: the order of
  // the four matrices matters, not only which elements a lane holds.
  struct RegsSwapped : SM80_16x8x16_Layout {
    static constexpr flashprobe::atoms::Coord a(int lane, int i) {
      const int r = i >> 1, rs = r == 1 ? 2 : r == 2 ? 1 : r;
      return SM80_16x8x16_Layout::a(lane, 2 * rs + (i & 1));
    }
  };
  EXPECT_FALSE((ldsm_feeds_a<RegsSwapped, N>()));
  struct HalvesSwapped : SM80_16x8x16_Layout {
    static constexpr flashprobe::atoms::Coord a(int lane, int i) { return SM80_16x8x16_Layout::a(lane, i ^ 1); }
  };
  EXPECT_FALSE((ldsm_feeds_a<HalvesSwapped, N>()));
}

// The backward's FA2 shape stores dS once, [key][query] (A of dK = dS^T Q, row-major), and reads the
// A fragment of dQ = dS K (m = queries, k = keys) from the same tile with ldmatrix.x4.trans.
TEST(AtomDerivations, LdmatrixTransFeedsSm80AFromAKMajorTile) {
  using flashprobe::atoms::ldsm_feeds_a;
  using flashprobe::atoms::SM80_16x8x16_Layout;
  using N = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<false>;
  using T = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<true>;
  static_assert(ldsm_feeds_a<SM80_16x8x16_Layout, T, false>());
  // Plain ldmatrix from a k-major tile delivers A^T.
  static_assert(!ldsm_feeds_a<SM80_16x8x16_Layout, N, false>());
  struct HalvesSwapped : SM80_16x8x16_Layout {
    static constexpr flashprobe::atoms::Coord a(int lane, int i) { return SM80_16x8x16_Layout::a(lane, i ^ 1); }
  };
  EXPECT_FALSE((ldsm_feeds_a<HalvesSwapped, T, false>()));
}
