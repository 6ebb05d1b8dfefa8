// wgmma/align=sector (src/wgmma/wgmma_config.h sector_shift; WGMMA_NOTES.md "Rows that start
// mid-sector"), replayed on the CPU: the 32-byte L2 sectors the TMA boxes of one row touch, counted
// box by box (a sector two boxes share is read twice), for every head dim of every tile class in the
// [b, s, h, d] tensors of bench's headdim group; the columns the shifted boxes and O's stores cover;
// the cases where the rule must not shift; and that the kernel grid holds cases the shift changes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "flashprobe/kernels/head_dim_classes.h"
#include "kernel_grid.h"
#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::dev {
namespace {

// Sectors read by the boxes of one row starting at byte `row0`: `boxes` boxes of `chunk` dims, the
// first at dim -shift, each clipped to the row's dims 0 .. d - 1 (the TMA reads nothing outside them).
int box_sectors(std::uint64_t row0, int d, int chunk, int boxes, int shift) {
  int n = 0;
  for (int c = 0; c < boxes; ++c) {
    const int lo = c * chunk - shift < 0 ? 0 : c * chunk - shift, hi = (c + 1) * chunk - shift < d ? (c + 1) * chunk - shift : d;
    if (lo >= hi) continue;
    const std::uint64_t a = row0 + 2 * lo, b = row0 + 2 * hi;  // bytes [a, b)
    n += static_cast<int>((b - 1) / kSectorBytes - a / kSectorBytes + 1);
  }
  return n;
}
// The fewest sectors that hold the row's bytes.
int row_sectors(std::uint64_t row0, int d) {
  return static_cast<int>((row0 + 2 * d - 1) / kSectorBytes - row0 / kSectorBytes + 1);
}

template <int D>
void check_class(int d_lo) {
  using C = WgmmaConfig<D>;
  constexpr int kHeads = 16, kSeq = 4096;  // bench's headdim group: B 4, H 16, S 4096, [b, s, h, d]
  for (int d = d_lo; d <= D; d += kHeadDimStep)
    for (int h = 0; h < kHeads; ++h) {
      SCOPED_TRACE("class " + std::to_string(D) + " d " + std::to_string(d) + " head " + std::to_string(h));
      const std::uint64_t row0 = 2ull * h * d;  // a 256-byte aligned base, as the allocator's
      const std::int64_t stride = 2ll * kHeads * d;
      const int shift = sector_shift(row0, stride, kSeq, d, D);
      EXPECT_EQ(shift, d % 16 == 8 && h % 2 == 1 ? 8 : 0) << "odd heads of d % 16 == 8 start 16 bytes into a sector";
      // Every row of the tensor alike (the stride is whole sectors with 16 heads).
      for (int s : {0, 1, 7, kSeq - 1}) {
        const std::uint64_t r = row0 + static_cast<std::uint64_t>(stride) * s;
        EXPECT_EQ(box_sectors(r, d, C::kChunk, C::kChunks, shift), row_sectors(r, d)) << "seq row " << s;
      }
      // The shifted boxes still cover every dim, and so do O's columns (accumulator column n is dim n - shift).
      EXPECT_LE(d + shift, C::kChunks * C::kChunk);
      EXPECT_LE(d + shift, C::kDv);
    }
  // What the shift saves: the shipped boxes (shift 0) read more sectors than the row holds at an odd
  // head of d % 16 == 8 (d = 136: 13 for 9).
  if (D >= 136 && D <= 160) {
    const std::uint64_t row0 = 2ull * 136;  // head 1 of d = 136
    EXPECT_EQ(box_sectors(row0, 136, C::kChunk, C::kChunks, 0), 13);
    EXPECT_EQ(row_sectors(row0, 136), 9);
  }
}

TEST(WgmmaAlign, BoxRowsReadTheFewestSectorsInEveryClass) {
  check_class<64>(8);
  check_class<128>(72);
  check_class<160>(136);
  check_class<256>(168);
}

TEST(WgmmaAlign, NoShiftWhereRowsDifferOrTheTileIsFull) {
  // Rows 272 bytes apart (one head of d = 136): every other row mid-sector, no one shift aligns them.
  EXPECT_EQ(sector_shift(0, 272, 4096, 136, 160), 0);
  EXPECT_EQ(sector_shift(16, 272, 4096, 136, 160), 0);
  EXPECT_EQ(sector_shift(16, 272, 1, 136, 160), 8) << "a single row is alike with itself";
  // The tile has no room for 8 more columns (a view 16 bytes into a sector at the class width).
  EXPECT_EQ(sector_shift(16, 4096 * 2, 100, 160, 160), 0);
  EXPECT_EQ(sector_shift(16, 4096 * 2, 100, 152, 160), 8);
  EXPECT_EQ(sector_shift(16, 4096 * 2, 100, 256, 256), 0);
  // Rows on sectors already.
  EXPECT_EQ(sector_shift(0, 4096 * 2, 100, 136, 160), 0);
  EXPECT_EQ(sector_shift(64, 4096 * 2, 100, 136, 160), 0);
}

// The launch runs the variant's kernel only where some (batch, kv head) shifts: bench's [b, s, h, d]
// tensors at d % 16 == 8 (odd heads), not at d % 16 == 0, not where the rows alternate (one head), and a
// view 16 bytes into a sector at any d below the class. The 16 x 16 (b, h) it looks at decide for all.
TEST(WgmmaAlign, AnyShiftFindsTheHeadsThatShift) {
  const auto bshd = [](std::uint64_t base, int batch, int heads, int d, int width) {
    const std::int64_t s = std::int64_t{heads} * d;
    return any_sector_shift(base, 4096 * s, s, d, batch, 4096, heads, d, width);
  };
  EXPECT_TRUE(bshd(0, 4, 16, 136, 160));
  EXPECT_FALSE(bshd(0, 4, 16, 144, 160));
  EXPECT_FALSE(bshd(0, 4, 16, 160, 160));
  EXPECT_FALSE(bshd(0, 4, 1, 136, 160)) << "one head: rows 272 bytes apart alternate, no shift aligns them";
  EXPECT_TRUE(bshd(0, 4, 2, 136, 160));
  EXPECT_TRUE(bshd(16, 1, 2, 144, 160)) << "a view 16 bytes into a sector";
  EXPECT_FALSE(bshd(16, 1, 2, 160, 160)) << "no room in the tile";
  // The first 16 x 16 (b, h) against all of them (batches and heads past 16, odd batch strides).
  for (int d : {8, 24, 72, 136, 144, 248})
    for (int heads : {1, 2, 3, 20})
      for (int batch : {1, 2, 17}) {
        const std::int64_t s = std::int64_t{heads} * d, sb = 100 * s + 8 * (batch % 2);
        bool any = false;
        for (int b = 0; b < batch; ++b)
          for (int h = 0; h < heads; ++h) any = any || sector_shift(2 * static_cast<std::uint64_t>(b * sb + h * d), 2 * s, 100, d, 256) != 0;
        EXPECT_EQ(any_sector_shift(0, sb, s, d, batch, 100, heads, d, 256), any) << d << " " << heads << " " << batch;
      }
}

// The GPU grid runs wgmma/align=sector on its cases: some of them must take the shift, for K (and so
// Q) alone, for V alone and for both, or the grid would check only the shipped coordinates.
TEST(WgmmaAlign, TheKernelGridHasShiftedCases) {
  int k_only = 0, v_only = 0, both = 0;
  for (const testing::GridCase& c : testing::kernel_grid()) {
    const AttnProblem& p = c.p;
    const HeadDimClass cl = head_dim_class(kWgmmaDimClasses, p.d, p.dv);
    if (!cl || cl.d == 192 || p.softcap > 0 || !p.alibi_slopes.empty()) continue;
    const Strides ks = p.k_strides(), vs = p.v_strides();
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < p.hkv; ++h) {
        const int sk = sector_shift(2ull * static_cast<std::uint64_t>(b * ks.b + h * ks.h), 2 * ks.s, p.sk, p.d, cl.d);
        const int sv = sector_shift(2ull * static_cast<std::uint64_t>(b * vs.b + h * vs.h), 2 * vs.s, p.sk, p.dv, cl.dv);
        k_only += sk > 0 && sv == 0;
        v_only += sv > 0 && sk == 0;
        both += sk > 0 && sv > 0;
      }
  }
  EXPECT_GT(k_only, 0);
  EXPECT_GT(v_only, 0);
  EXPECT_GT(both, 0);
}

}  // namespace
}  // namespace flashprobe::kernels::dev
