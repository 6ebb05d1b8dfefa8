// The k order of the AMD WMMA/MFMA A and B operands. gfx12 wave32 holds k in runs of four per lane
// group (RDNA4 ISA guide, "WMMA": lane 0 holds k 0-3 and 8-11, lane 16 k 4-7 and 12-15), not k
// contiguously per lane (KContiguous below, a plausible misreading). D = A*B cannot tell the two
// apart: A and B share every k relabelling, so D (and every kernel built on the atom, which loads A
// and B through the same layout) is the same under both. These tests state the ISA's slots and prove
// that claim on integer matrices (exact in double).
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "flashprobe/atoms/amd_layout.h"

using namespace flashprobe::atoms;

namespace {

using Mat = std::array<std::array<double, 16>, 16>;

// The misreading: k = kA*(lane/16) + slot (k contiguous per lane).
template <int kWave>
struct KContiguous : GFX12_WMMA_Layout<kWave> {
  using L = GFX12_WMMA_Layout<kWave>;
  static constexpr Coord a(int lane, int i) { return {lane % 16, L::kA * (lane / 16) + i}; }
  static constexpr Coord b(int lane, int i) { return {L::kB * (lane / 16) + i, lane % 16}; }
};

Mat random_ints(std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-8, 8);
  Mat m{};
  for (auto& row : m)
    for (auto& x : row) x = d(rng);
  return m;
}

// Registers: element (lane, slot) of A and B placed through layout Load.
template <class Load>
std::vector<double> pack_a(const Mat& a) {
  std::vector<double> r(static_cast<std::size_t>(Load::kWave * Load::kA));
  for (int l = 0; l < Load::kWave; ++l)
    for (int s = 0; s < Load::kA; ++s) r[static_cast<std::size_t>(l * Load::kA + s)] = a[Load::a(l, s).row][Load::a(l, s).col];
  return r;
}
template <class Load>
std::vector<double> pack_b(const Mat& b) {
  std::vector<double> r(static_cast<std::size_t>(Load::kWave * Load::kB));
  for (int l = 0; l < Load::kWave; ++l)
    for (int s = 0; s < Load::kB; ++s) r[static_cast<std::size_t>(l * Load::kB + s)] = b[Load::b(l, s).row][Load::b(l, s).col];
  return r;
}

// What the instruction computes from registers when its operands mean what layout Hw says.
template <class Hw>
Mat instruction(const std::vector<double>& ra, const std::vector<double>& rb) {
  Mat a{}, b{}, d{};
  for (int l = 0; l < Hw::kWave; ++l) {
    for (int s = 0; s < Hw::kA; ++s) a[Hw::a(l, s).row][Hw::a(l, s).col] = ra[static_cast<std::size_t>(l * Hw::kA + s)];
    for (int s = 0; s < Hw::kB; ++s) b[Hw::b(l, s).row][Hw::b(l, s).col] = rb[static_cast<std::size_t>(l * Hw::kB + s)];
  }
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n)
      for (int k = 0; k < 16; ++k) d[m][n] += a[m][k] * b[k][n];
  return d;
}

Mat product(const Mat& a, const Mat& b) {
  Mat d{};
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n)
      for (int k = 0; k < 16; ++k) d[m][n] += a[m][k] * b[k][n];
  return d;
}

template <int kWave>
int k_differences() {
  int n = 0;
  for (int l = 0; l < kWave; ++l)
    for (int s = 0; s < GFX12_WMMA_Layout<kWave>::kA; ++s) {
      n += GFX12_WMMA_Layout<kWave>::a(l, s).col != KContiguous<kWave>::a(l, s).col;
      n += GFX12_WMMA_Layout<kWave>::b(l, s).row != KContiguous<kWave>::b(l, s).row;
    }
  return n;
}

}  // namespace

TEST(AmdKOrder, Gfx12Wave32HoldsKInRunsOfFourAsTheIsaStates) {
  using L = GFX12_WMMA_Layout<32>;
  constexpr std::array<int, 8> lane0{0, 1, 2, 3, 8, 9, 10, 11}, lane16{4, 5, 6, 7, 12, 13, 14, 15};
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(L::a(0, s).col, lane0[static_cast<std::size_t>(s)]) << "A lane 0 slot " << s;
    EXPECT_EQ(L::a(16, s).col, lane16[static_cast<std::size_t>(s)]) << "A lane 16 slot " << s;
    EXPECT_EQ(L::b(5, s).row, lane0[static_cast<std::size_t>(s)]) << "B lane 5 slot " << s;
    EXPECT_EQ(L::b(21, s).row, lane16[static_cast<std::size_t>(s)]) << "B lane 21 slot " << s;
    EXPECT_EQ(L::a(21, s).row, 5);
    EXPECT_EQ(L::b(21, s).col, 5);
  }
  // The count: half of the A slots and half of the B slots moved; wave64 (4 slots) did not.
  EXPECT_EQ(k_differences<32>(), 128 + 128);
  EXPECT_EQ(k_differences<64>(), 0);
}

TEST(AmdKOrder, Gfx12KeepsSlotPairsAdjacentInK) {
  // The mma kernel loads slots 2r, 2r+1 as one 32-bit word when they are neighbours along k from an
  // even k (mma_attn.cuh a_pairs_along_k / b_pairs_along_k): the runs of four keep that true.
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 4; ++r) {
      const Coord x = GFX12_WMMA_Layout<32>::a(l, 2 * r), y = GFX12_WMMA_Layout<32>::a(l, 2 * r + 1);
      EXPECT_EQ(x.row, y.row);
      EXPECT_EQ(y.col, x.col + 1);
      EXPECT_EQ(x.col % 2, 0);
    }
}

// Operands packed through either declaration give the same D on an instruction that means either:
// the k order is invisible in D, so the kernels' results are the same before and after the fix.
template <int kWave>
void expect_same_d() {
  std::mt19937 rng(29 + kWave);
  for (int trial = 0; trial < 20; ++trial) {
    const Mat a = random_ints(rng), b = random_ints(rng), want = product(a, b);
    using New = GFX12_WMMA_Layout<kWave>;
    using Old = KContiguous<kWave>;
    EXPECT_EQ(instruction<New>(pack_a<New>(a), pack_b<New>(b)), want);  // loads and hardware agree: A*B
    EXPECT_EQ(instruction<Old>(pack_a<Old>(a), pack_b<Old>(b)), want);  // the old declaration, self-consistent
    EXPECT_EQ(instruction<New>(pack_a<Old>(a), pack_b<Old>(b)), want);  // old kernel loads, ISA hardware
  }
}
TEST(AmdKOrder, DIsTheSameUnderEitherKOrder) {
  expect_same_d<32>();
  expect_same_d<64>();
}

// The same invariance cuts the other way: A loaded by one k order and B by the other is wrong, so
// the test above is not vacuous.
TEST(AmdKOrder, MixedKOrdersGiveAWrongD) {
  std::mt19937 rng(7);
  const Mat a = random_ints(rng), b = random_ints(rng);
  using New = GFX12_WMMA_Layout<32>;
  using Old = KContiguous<32>;
  EXPECT_NE(instruction<New>(pack_a<Old>(a), pack_b<New>(b)), product(a, b));
}
