#pragma once
// The order in which the mma kernel's blocks take the row blocks of a problem (PERF_NOTES.md).
//
// One block per 128-row block of each (batch, head). Blocks are dispatched roughly in the order of
// their linear index x + X * (y + Y * z), and a block that finishes is replaced by the next. Under a
// causal mask row block m sees about m + 1 key tiles, so the order decides the tail: a heavy row
// block dispatched near the end runs on while the rest of the GPU idles.
//   rows_inner  (grid nm x hq x batch): one head's row blocks heaviest first, then the next
//               head. The last head's heaviest blocks start less than one head's work before the
//               end: a list-scheduling model of the causal prefill grid
//               (scripts/gpu/block_order_model.py) puts the loss at 11-15 % (D = 128) and 6-8 %
//               (D = 64); measured, heads_inner is 8-11 % and 3-4 % faster.
//   heads_inner (grid hq x nm x batch): a batch's heads innermost, its row blocks heaviest first,
//               then the next batch. Only the last batch's light blocks are left for the tail (the
//               model: 0-10 %, never worse than rows_inner); a batch's heads run together, each
//               head's blocks reading its K and V tile by tile at about the same time.
// m, h and b come straight from the block indices in both orders: derived by a division, b and h
// were kept live through the key loop and spilled at D = 128 (8 -> 68-92 bytes, ptxas).
namespace flashprobe::kernels::dev {

enum class MmaOrder : int { rows_inner = 0, heads_inner = 1 };

struct MmaGrid {
  unsigned x, y, z;
};

struct MmaRowBlock {
  int m, h, b;  // row block (first row m * kBm), query head, batch
};

// The grid of nm row blocks per (batch, head) in order o.
constexpr MmaGrid mma_grid(MmaOrder o, int nm, int hq, int batch) {
  return o == MmaOrder::heads_inner ? MmaGrid{unsigned(hq), unsigned(nm), unsigned(batch)}
                                    : MmaGrid{unsigned(nm), unsigned(hq), unsigned(batch)};
}

// The row block of block (x, y, z) of a grid of gx x gy x ... blocks in order o: heaviest first.
constexpr MmaRowBlock mma_row_block(MmaOrder o, unsigned x, unsigned y, unsigned z, unsigned gx, unsigned gy) {
  return o == MmaOrder::heads_inner ? MmaRowBlock{int(gy - 1 - y), int(x), int(z)}
                                    : MmaRowBlock{int(gx - 1 - x), int(y), int(z)};
}

// A grid's y limit (CUDA and HIP; x allows 2^31 - 1): registry.h's kMaxGridYZ, checked in mma_launch.cuh.
inline constexpr int kMmaMaxGridY = 65535;

// Who chooses the order: the rule below (automatic, what the shipped kernel does), or a forced order
// for measuring the choice (the variants mma/order=rows and mma/order=heads, variants.h).
enum class MmaOrderChoice : int { automatic = 0, rows = 1, heads = 2 };

// The order for a problem: heads_inner under a causal mask (row blocks differ in cost), unless its
// row blocks exceed the grid's y limit; rows_inner without one (every row block costs the same and
// a head's blocks share its K and V; the registry keeps hq within the y limit). A forced choice
// overrides the rule where it fits the grid.
constexpr MmaOrder mma_order(bool causal, int nm, MmaOrderChoice choice = MmaOrderChoice::automatic) {
  const MmaOrder o = choice == MmaOrderChoice::rows    ? MmaOrder::rows_inner
                     : choice == MmaOrderChoice::heads ? MmaOrder::heads_inner
                     : causal                          ? MmaOrder::heads_inner
                                                       : MmaOrder::rows_inner;
  return o == MmaOrder::heads_inner && nm > kMmaMaxGridY ? MmaOrder::rows_inner : o;
}

}  // namespace flashprobe::kernels::dev
