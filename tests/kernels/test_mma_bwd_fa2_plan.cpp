// CPU checks of the tensor-core backward's addressing (no GPU): the ldmatrix lane addresses
// (src/mma/mma_bwd_lanes.h) composed with the ldmatrix layout deliver, lane by lane and register by
// register, the element the SM80 atom's a() / b() names; mma_bwd_fa2's wave tiles
// (src/mma/mma_bwd_fa2_plan.h) cover each product's block exactly once; its shared-memory regions are
// disjoint, aligned and inside the count; the P^T / dS^T pad puts ldmatrix rows and one wave's C-pair
// stores on distinct banks.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/atoms/sm80_layout.h"
#include "src/mma/mma_bwd_fa2_plan.h"
#include "src/mma/mma_bwd_lanes.h"

namespace {

using flashprobe::atoms::Coord;
using flashprobe::atoms::SM80_16x8x16_Layout;
using flashprobe::kernels::MmaBwdFa2Plan;
using flashprobe::kernels::dev::LdsmLanes;
using At = SM80_16x8x16_Layout;

// Lane t of ldmatrix.x4 addresses tile row row(t), columns 8 * chunk(t) ..; returns the tile element
// (row, column) that lane `lane` receives in slot s (half s % 2 of register s / 2).
template <bool Trans>
Coord delivered(int (*row)(int), int (*chunk)(int), int lane, int s) {
  const Coord e = flashprobe::atoms::SM75_LDMATRIX_X4_Layout<Trans>::at(lane, s);  // stack row, column
  return {row(e.row), 8 * chunk(e.row) + e.col};
}

// The number of (lane, slot) pairs whose delivered element is not the atom's.
int a_mismatches(int (*row)(int), int (*chunk)(int), bool kmajor) {
  int bad = 0;
  for (int l = 0; l < 32; ++l)
    for (int s = 0; s < 8; ++s) {
      const Coord t = kmajor ? delivered<true>(row, chunk, l, s) : delivered<false>(row, chunk, l, s);
      const Coord a = kmajor ? Coord{t.col, t.row} : t;  // k-major tile: row = k, column = m
      if (!(a == At::a(l, s))) ++bad;
    }
  return bad;
}
// B of two n-tiles: registers 0-1 are n-tile 0's fragment, 2-3 n-tile 1's.
int b_mismatches(int (*row)(int), int (*chunk)(int), bool nmajor) {
  int bad = 0;
  for (int l = 0; l < 32; ++l)
    for (int s = 0; s < 8; ++s) {
      const Coord t = nmajor ? delivered<false>(row, chunk, l, s) : delivered<true>(row, chunk, l, s);
      const Coord kn = nmajor ? Coord{t.col, t.row} : t;  // (k, n over both tiles)
      const Coord want = At::b(l, s % 4);
      if (!(kn.row == want.row && kn.col == want.col + 8 * (s / 4))) ++bad;
    }
  return bad;
}

TEST(MmaBwdLanes, EveryLaneAddressDeliversTheAtomsElement) {
  EXPECT_EQ(a_mismatches(LdsmLanes::a_row, LdsmLanes::a_chunk, false), 0);
  EXPECT_EQ(a_mismatches(LdsmLanes::akm_row, LdsmLanes::akm_chunk, true), 0);
  EXPECT_EQ(b_mismatches(LdsmLanes::bn_row, LdsmLanes::bn_chunk, true), 0);
  EXPECT_EQ(b_mismatches(LdsmLanes::bk_row, LdsmLanes::bk_chunk, false), 0);
}

// The check can fail: the m-major addresses used on the k-major tile (or the other way round), and
// the k-major A addresses with their row blocks swapped, are caught.
TEST(MmaBwdLanes, AWrongAddressIsCaught) {
  EXPECT_GT(a_mismatches(LdsmLanes::a_row, LdsmLanes::a_chunk, true), 0);
  EXPECT_GT(a_mismatches(LdsmLanes::akm_row, LdsmLanes::akm_chunk, false), 0);
  EXPECT_GT(a_mismatches([](int t) { return ((t >> 3) & 1) * 8 + (t & 7); }, [](int t) { return t >> 4; }, true), 0);
  EXPECT_GT(b_mismatches(LdsmLanes::bk_row, LdsmLanes::bk_chunk, true), 0);
}

// Each product's wave tiles cover its block exactly once.
template <class P>
void expect_cover(int rows, int cols, int th, int tw, int (*r0)(int), int (*c0)(int), const char* what) {
  std::vector<int> seen(static_cast<std::size_t>(rows) * cols, 0);
  for (int w = 0; w < P::kWaves; ++w)
    for (int r = 0; r < th; ++r)
      for (int c = 0; c < tw; ++c) {
        const int rr = r0(w) + r, cc = c0(w) + c;
        ASSERT_TRUE(rr >= 0 && rr < rows && cc >= 0 && cc < cols) << what << " wave " << w;
        ++seen[static_cast<std::size_t>(rr) * cols + cc];
      }
  for (int x : seen) ASSERT_EQ(x, 1) << what;
}

template <int D>
void check_plan() {
  using P = MmaBwdFa2Plan<D>;
  SCOPED_TRACE(D);
  expect_cover<P>(P::kBc, P::kBr, P::kSKeys, P::kSRows, P::s_key0, P::s_row0, "S^T");
  expect_cover<P>(P::kBc, D, P::kKKeys, P::kKDims, P::kv_key0, P::kv_dim0, "dK/dV");
  expect_cover<P>(P::kBr, D, P::kQRows, P::kQDims, P::q_row0, P::q_dim0, "dQ");
  // The regions, in bytes: K, V, 4 Q/dO tiles, P^T, dS^T, then the floats; disjoint, 16-byte aligned.
  const std::vector<std::pair<int, int>> regions = {
      {2 * P::kK, 2 * P::kKTile}, {2 * P::kV, 2 * P::kKTile},  {2 * P::kQd, 8 * P::kQTile},
      {2 * P::kP, 2 * P::kPTile}, {2 * P::kDs, 2 * P::kPTile}, {P::kLseBytes, 16 * P::kBr}};
  int end = 0;
  for (const auto& [off, bytes] : regions) {
    EXPECT_EQ(off, end);
    EXPECT_EQ(off % 16, 0);
    end = off + bytes;
  }
  EXPECT_EQ(end, P::kSmemBytes);
  // ldmatrix: the 8 rows of a matrix (16 bytes each) of every tile fall on distinct 16-byte bank groups.
  for (int ld : {P::kLd, P::kPLd}) {
    std::set<int> groups;
    for (int r = 0; r < 8; ++r) groups.insert((r * ld * 2 / 16) % 8);
    EXPECT_EQ(groups.size(), 8u) << "row length " << ld;
  }
  // One wave's 32-bit stores of a C slot pair into P^T (row = key, column = query) hit 32 banks.
  for (int r = 0; r < At::kC / 2; ++r) {
    std::set<int> banks;
    for (int l = 0; l < 32; ++l) {
      const Coord c = At::c(l, 2 * r);
      banks.insert(((c.row * P::kPLd + c.col) * 2 / 4) % 32);
    }
    EXPECT_EQ(banks.size(), 32u);
  }
}

TEST(MmaBwdFa2Plan, WaveTilesCoverEachProductOnceAndSharedMemoryIsLaidOut) {
  check_plan<64>();
  check_plan<128>();
  EXPECT_EQ(MmaBwdFa2Plan<64>::kSmemBytes, 182272);
  EXPECT_EQ(MmaBwdFa2Plan<128>::kSmemBytes, 177152);
}

}  // namespace
