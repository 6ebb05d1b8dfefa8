#pragma once
// The shipped wgmma's O stores (wgmma_consumer.cuh; timed as wgmma/epilogue=vec16): 16-byte pieces,
// each 32-byte sector of O written whole by one instruction, instead of the accumulator layout's
// 4-byte column pairs (wgmma/epilogue=pairs; one warp
// store covers 16 bytes of each of 8 rows, so every sector of O arrives in two halves from two
// instructions: Nsight counted 4.36 M sectors into the L2 for 2.10 M of O at d128 S 512,
// WGMMA_NOTES.md). Plain constexpr code that the kernel and a CPU test
// (tests/kernels/test_wgmma_epilogue.cpp) share.
//
// The wgmma C layout (SM90_64xNx16_Layout) gives the 4 lanes of a quad (lane % 4 = 0..3) the column
// pairs 2 (lane % 4) of every 8-column block j of one row (slots 4 j + 2 h, + 1; h = 0, 1 the row and
// the row 8 further). For 4 consecutive blocks j = 4 g + i the quad holds a 4 x 4 matrix of 32-bit
// words (lane x block); transposing it inside the quad (two shuffle stages, xor 2 then xor 1) leaves
// lane qd the 4 words of block 4 g + qd: columns 8 (4 g + qd) .. + 7 of the row, 16 bytes. A warp
// store then covers 64 contiguous bytes (two whole sectors) of each of 8 rows.
//   group (h, g)            a store: word i of it before the transpose is the pair at slot
//                           vec16_slot(h, g, i); after it, word k is columns vec16_col(qd, g) + 2 k, + 1
//   quad_send / quad_recv   one stage of the transpose: what a lane sends to lane ^ m, and where
//                           what it receives goes (the device exchanges the two words with shfl_xor)
#include <cstdint>

namespace flashprobe::kernels::dev {

// Slot of the first column of the pair that is word i of group (h, g) before the transpose.
constexpr int vec16_slot(int h, int g, int i) { return 4 * (4 * g + i) + 2 * h; }
// First column of the 16 bytes lane qd (lane % 4) stores for group g.
constexpr int vec16_col(int qd, int g) { return 8 * (4 * g + qd); }
// Stores per thread: two row halves times N / 32 groups of four 8-column blocks.
constexpr int vec16_groups(int n) { return 2 * (n / 32); }
constexpr int vec16_group_h(int x) { return x % 2; }
constexpr int vec16_group_g(int x) { return x / 2; }

// One stage of the 4 x 4 transpose inside a quad, over the lane bit m (2, then 1). A lane at quad
// position qd keeps the words whose index has bit m equal to its own, and sends the other two to
// lane qd ^ m, which puts them at index ^ m.
constexpr void quad_send(const std::uint32_t (&a)[4], int qd, int m, std::uint32_t (&s)[2]) {
  const bool hi = (qd & m) != 0;
  const int lo0 = 0, lo1 = m == 2 ? 1 : 2;  // the indices with bit m clear
  s[0] = hi ? a[lo0] : a[lo0 + m];
  s[1] = hi ? a[lo1] : a[lo1 + m];
}
constexpr void quad_recv(std::uint32_t (&a)[4], int qd, int m, const std::uint32_t (&r)[2]) {
  const bool hi = (qd & m) != 0;
  const int lo0 = 0, lo1 = m == 2 ? 1 : 2;
  if (hi) {
    a[lo0] = r[0];
    a[lo1] = r[1];
  } else {
    a[lo0 + m] = r[0];
    a[lo1 + m] = r[1];
  }
}

// Whether the C layout OL is the one the transpose assumes, for every lane and store: the words a lane
// ends with came from its quad's lanes at the slots vec16_slot names, lie in one row (the row of the
// lane's own slot 2 h) and are the 8 consecutive columns from vec16_col.
template <class OL>
constexpr bool vec16_layout_ok() {
  if (OL::N % 32 != 0 || OL::kC != OL::N / 2) return false;
  for (int l = 0; l < OL::kWave; ++l)
    for (int x = 0; x < vec16_groups(OL::N); ++x) {
      const int h = vec16_group_h(x), g = vec16_group_g(x), qd = l % 4;
      for (int k = 0; k < 4; ++k) {
        const int src = (l & ~3) | k;  // after the transpose, word k of lane l is word qd of lane src
        const auto c0 = OL::c(src, vec16_slot(h, g, qd)), c1 = OL::c(src, vec16_slot(h, g, qd) + 1);
        if (c0.row != OL::c(l, 2 * h).row || c1.row != c0.row) return false;
        if (c0.col != vec16_col(qd, g) + 2 * k || c1.col != c0.col + 1) return false;
      }
    }
  return true;
}

}  // namespace flashprobe::kernels::dev
