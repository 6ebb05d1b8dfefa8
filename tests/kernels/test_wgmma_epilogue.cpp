// wgmma's 16-byte O stores (src/wgmma/wgmma_epilogue.h), replayed on the CPU: every lane of a
// warpgroup fills its accumulator slots with the (row, column) the wgmma C layout gives them, the quad
// transpose runs with quad_send / quad_recv and an emulated shfl_xor (all lanes of a stage send, then
// all receive, as the warp does in lockstep), and each lane's 16-byte store is placed at the row of its
// slot 2 h and the columns from vec16_col. The tile written must hold every element exactly once and at
// its own place; a wrong slot, column or transpose stage fails here instead of on a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "flashprobe/atoms/sm90_wgmma_layout.h"
#include "src/wgmma/wgmma_epilogue.h"

namespace flashprobe::kernels::dev {
namespace {

// What the test may break on purpose, to show that the replay catches it.
struct Slip {
  int col_shift = 0;         // added to vec16_col
  bool skip_stage1 = false;  // the xor 1 stage left out
  bool swap_halves = false;  // the row half of a group taken from the other h
};

// A word packs the two columns' ids (16 bits each: row * 256 + col), as the kernel packs two 16-bit values.
std::uint32_t id(int row, int col) { return static_cast<std::uint32_t>(row * 256 + col); }
std::uint32_t word(int row, int col) { return id(row, col) | (id(row, col + 1) << 16); }

// A C layout whose quads hold their columns in another order: the transpose does not fit it.
struct SwappedQuads {
  static constexpr int N = 128, kC = 64, kWave = 128;
  static constexpr atoms::Coord c(int lane, int i) { return atoms::SM90_64xNx16_Layout<128>::c(lane ^ 1, i); }
};

template <int N>
std::string replay(const Slip& slip = {}) {
  using OL = atoms::SM90_64xNx16_Layout<N>;
  constexpr int kGroups = vec16_groups(N);
  std::vector<int> seen(64 * N, 0);
  for (int x = 0; x < kGroups; ++x) {
    const int h = vec16_group_h(x), g = vec16_group_g(x);
    // Before the transpose: lane l's word i is its pair at vec16_slot(h, g, i).
    std::vector<std::array<std::uint32_t, 4>> a(OL::kWave);
    for (int l = 0; l < OL::kWave; ++l)
      for (int i = 0; i < 4; ++i) {
        const int q = vec16_slot(slip.swap_halves ? 1 - h : h, g, i);
        const auto c = OL::c(l, q);
        if (OL::c(l, q + 1).col != c.col + 1 || OL::c(l, q + 1).row != c.row) return "slot pair not adjacent columns";
        a[l][i] = word(c.row, c.col);
      }
    for (int m = 2; m >= 1; m /= 2) {
      if (m == 1 && slip.skip_stage1) continue;
      std::vector<std::array<std::uint32_t, 2>> snd(OL::kWave);
      for (int l = 0; l < OL::kWave; ++l) {
        std::uint32_t in[4] = {a[l][0], a[l][1], a[l][2], a[l][3]}, s[2];
        quad_send(in, l % 4, m, s);
        snd[l] = {s[0], s[1]};
      }
      for (int l = 0; l < OL::kWave; ++l) {
        std::uint32_t io[4] = {a[l][0], a[l][1], a[l][2], a[l][3]};
        const std::uint32_t r[2] = {snd[l ^ m][0], snd[l ^ m][1]};  // shfl_xor(v, m)
        quad_recv(io, l % 4, m, r);
        a[l] = {io[0], io[1], io[2], io[3]};
      }
    }
    // The store: the row of the lane's slot 2 h, 8 columns from vec16_col.
    for (int l = 0; l < OL::kWave; ++l) {
      const int row = OL::c(l, 2 * h).row, col = vec16_col(l % 4, g) + slip.col_shift;
      if (col < 0 || col + 8 > N) return "store at column " + std::to_string(col) + " leaves the tile";
      for (int k = 0; k < 4; ++k)
        for (int e = 0; e < 2; ++e) {
          const std::uint32_t got = (a[l][k] >> (16 * e)) & 0xFFFF;
          const int at = col + 2 * k + e;
          if (got != id(row, at))
            return "N " + std::to_string(N) + " group " + std::to_string(x) + " lane " + std::to_string(l) +
                   ": column " + std::to_string(at) + " of row " + std::to_string(row) + " got element (" +
                   std::to_string(got / 256) + ", " + std::to_string(got % 256) + ")";
          ++seen[row * N + at];
        }
    }
  }
  for (int e = 0; e < 64 * N; ++e)
    if (seen[e] != 1) return "element (" + std::to_string(e / N) + ", " + std::to_string(e % N) + ") stored " + std::to_string(seen[e]) + " times";
  return "";
}

TEST(WgmmaEpilogue, Vec16StoresEveryElementOnceAtItsPlace) {
  EXPECT_EQ(replay<64>(), "");
  EXPECT_EQ(replay<128>(), "");
  EXPECT_EQ(replay<256>(), "");  // the 256/256 class
  EXPECT_EQ(replay<160>(), "");  // the 160/160 class
  EXPECT_EQ(replay<192>(), "");  // the 192/192 class (wgmma/classes=fine)
  EXPECT_EQ(replay<96>(), "");   // the 96/96 class (wgmma/classes=fine)
  EXPECT_EQ(replay<224>(), "");  // the 224/224 class (wgmma/classes=fine)
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<64>>());
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<256>>());
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<160>>());
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<192>>());
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<96>>());
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<224>>());
  static_assert(vec16_layout_ok<atoms::SM90_64xNx16_Layout<128>>());
}

// Each store is one row's 16 contiguous bytes at a multiple of 8 columns (16 bytes), and a warp's
// store for one group covers whole 32-byte sectors: the 4 lanes of a quad write 32 columns (64 bytes)
// of one row, starting at a multiple of 32 columns. This is what halves the sectors written.
TEST(WgmmaEpilogue, AWarpStoreCoversWholeSectors) {
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(vec16_col(0, g) % 32, 0);
    for (int qd = 0; qd < 4; ++qd) EXPECT_EQ(vec16_col(qd, g), vec16_col(0, g) + 8 * qd);
  }
  EXPECT_EQ(vec16_groups(128), 8);  // 32 column pairs a thread: 8 stores of 4 pairs
  EXPECT_EQ(vec16_groups(64), 4);
}

// The replay is sharp: a shifted column, a missing transpose stage or the wrong row half all fail.
TEST(WgmmaEpilogue, ASlipIsCaught) {
  EXPECT_NE(replay<128>({.col_shift = 8}), "");
  EXPECT_NE(replay<128>({.col_shift = -8}), "");
  EXPECT_NE(replay<128>({.skip_stage1 = true}), "");
  EXPECT_NE(replay<64>({.swap_halves = true}), "");
  static_assert(!vec16_layout_ok<SwappedQuads>());
}

}  // namespace
}  // namespace flashprobe::kernels::dev
