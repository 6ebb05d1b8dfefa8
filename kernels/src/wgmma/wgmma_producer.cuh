#pragma once
// The producer of a persistent wgmma block (wgmma_attn.cuh): one warp of the producer warpgroup.
// Lane 0 issues every TMA load; the whole warp zeroes V rows past keys(b) where a tile crosses them.
// It walks the block's row blocks (for_each_row_block) as the consumers do and, per row block with
// visible keys:
//   Q          into the one Q buffer once the consumers released the previous row block's Q
//              (q_empty, after their last S = Q K^T), so it arrives while they finish that block
//   tile t     the n-th tile of the whole walk goes to stage s = n % kStages, its use u = n / kStages:
//              K after the consumers released K of tile n - kStages (k_empty[s], completion u - 1),
//              then V likewise on v_empty[s]
// Both consumer warpgroups must release a stage before it is refilled (empty barriers count
// kConsumers arrivals), so the producer runs at most kStages tiles ahead of the slower one, and
// the next row block's loads start as soon as stages free up: no pipeline drain between blocks.
// A head dim below the tile class (d or dv < D): the maps carry the tensors' own d and dv, so box
// columns past them arrive as zeros, and the TMA counts a box's full bytes either way (the expected
// transaction bytes stay the boxes' whole size).
// kL2Ahead (wgmma/l2ahead=on, WGMMA_NOTES.md "Where the fixed cost goes"): once Q of a row block is
// issued, the leader also asks the TMA to bring the next row block of the walk (next_in_walk) into
// the L2: its Q and its first kL2AheadTiles K and V tiles (no shared memory, no barrier: a hint), so
// that their DRAM reads overlap this row block's products instead of stalling every block of the grid
// at the same transition. Written as `if constexpr` insertions so that the shipped producer's code
// (kL2Ahead false) stays what it was, machine code included.
// kAlign (wgmma/align=sector, WGMMA_NOTES.md "Rows that start mid-sector"): each row block's Q and K
// boxes start wgmma_shifts(...).qk dims before dim 0 and its V boxes .v dims before, so that the box
// rows begin on 32-byte sectors; 0 without it (the shipped coordinates).
#include <cstdint>

#include "flashprobe/atoms/sm90_wgmma.cuh"
#include "flashprobe/core/device.cuh"
#include "src/wgmma/sm90_tma.cuh"
#include "src/wgmma/wgmma_block.cuh"

namespace flashprobe::kernels::dev {

template <int D, int Dv, bool kL2Ahead = false, int S = 0, bool kAlign = false>
FP_DEV void wgmma_produce(const WgmmaSmem<D, Dv, S>& sm, const Params& p, const CUtensorMap* tq, const CUtensorMap* tk,
                          const CUtensorMap* tv) {
  using C = WgmmaConfig<D, Dv, S>;
  constexpr int Bn = C::kBn;
  const bool leader = threadIdx.x % 32 == 0;
  // A tile of `chunks` boxes of kChunk dims (Q and K: C::kChunks, V: C::kVChunks), the first at dim -shift.
  const auto load = [&](const CUtensorMap* map, std::uint16_t* dst, int rows, int chunks, std::uint64_t* bar, int row0,
                        int head, int b, int shift) {
    sm90::mbar_expect_tx(bar, static_cast<std::uint32_t>(rows * chunks * C::kChunk * 2));
    for (int c = 0; c < chunks; ++c)
      sm90::tma_load_4d(dst + c * rows * C::kChunk, map, bar, c * C::kChunk - shift, row0, head, b);
  };
  if (leader) {
    sm90::tma_prefetch_map(tq);
    sm90::tma_prefetch_map(tk);
    sm90::tma_prefetch_map(tv);
  }
  int n = 0;      // tiles issued so far in this block's walk (ring position)
  int qn = 0;     // row blocks with keys so far (Q buffer uses)
  int lands = 0;  // V tiles landed on v_land so far
  // kL2Ahead: the walk position (item, row block in it) of the row block in hand, and how many came.
  [[maybe_unused]] int walk_w = static_cast<int>(blockIdx.x), walk_k = 0, walked = 0;
  [[maybe_unused]] const WgmmaWorkList wl = work_list_of<D>(p.sq, p.hq, p.batch, p.causal != CausalMode::none);
  // The row block after the one in hand: its Q and first K/V tiles into the L2.
  [[maybe_unused]] const auto prefetch_next_l2 = [&] {
    int w2 = 0, k2 = 0;
    if (!wl.next_in_walk(walk_w, walk_k, static_cast<int>(gridDim.x), w2, k2)) return;
    const WgmmaRows next = wgmma_rows<D, Dv>(p, wl.row_block(w2, k2));
    if (next.ntiles <= 0) return;
    for (int c = 0; c < C::kChunks; ++c) sm90::tma_prefetch_l2_4d(tq, c * C::kChunk, next.i0, next.h, next.b);
    for (int t = 0; t < next.ntiles && t < C::kL2AheadTiles; ++t) {
      for (int c = 0; c < C::kChunks; ++c) sm90::tma_prefetch_l2_4d(tk, c * C::kChunk, next.kv0(t, Bn), next.hk, next.b);
      for (int c = 0; c < C::kVChunks; ++c) sm90::tma_prefetch_l2_4d(tv, c * C::kChunk, next.kv0(t, Bn), next.hk, next.b);
    }
  };
  for_each_row_block<D, Dv>(p, [&](const WgmmaRows& r) {
    if constexpr (kL2Ahead) {
      if (walked++ > 0) wl.next_in_walk(walk_w, walk_k, static_cast<int>(gridDim.x), walk_w, walk_k);
    }
    if (r.ntiles == 0) return;  // nothing to load; the consumers write the empty rows
    WgmmaShifts sh{0, 0};
    if constexpr (kAlign) sh = wgmma_shifts<D, Dv>(p, r);
    if (leader) {
      if (qn > 0) sm90::mbar_wait(sm.q_empty(), (qn - 1) & 1);
      load(tq, sm.q_s(), C::kBm, C::kChunks, sm.q_full(), r.i0, r.h, r.b, sh.qk);
      if constexpr (kL2Ahead) prefetch_next_l2();
    }
    ++qn;
    // The tile whose keys cross keys(b) inside the tensor (a padded cache with per-batch lengths): the
    // TMA zero-fills only rows past the tensor. At most one per row block (its keys end at keys(b) - 1).
    const int rel = r.keys - r.kv_first;
    const int tail_tile = r.keys < p.sk && rel % Bn != 0 ? rel / Bn : -1;
    for (int t = 0; t < r.ntiles; ++t, ++n) {
      const int s = n % C::kStages, use = n / C::kStages;
      const int kv0 = r.kv0(t, Bn);
      if (leader) {
        if (use > 0) sm90::mbar_wait(sm.k_empty(s), (use - 1) & 1);
        load(tk, sm.k_s(s), Bn, C::kChunks, sm.k_full(s), kv0, r.hk, r.b, sh.qk);
        if (use > 0) sm90::mbar_wait(sm.v_empty(s), (use - 1) & 1);
      }
      if (t != tail_tile) {
        if (leader) load(tv, sm.v_s(s), Bn, C::kVChunks, sm.v_full(s), kv0, r.hk, r.b, sh.v);
        continue;
      }
      // Land V on a barrier of its own, zero rows keys(b) - kv0 .. Bn - 1 (whole rows: the swizzle
      // only permutes 16-byte pieces inside a row), make the plain stores visible to the async proxy
      // that wgmma reads through, and only then complete v_full[s] with a plain arrival.
      if (leader) load(tv, sm.v_s(s), Bn, C::kVChunks, sm.v_land(), kv0, r.hk, r.b, sh.v);
      __syncwarp();
      sm90::mbar_wait(sm.v_land(), lands & 1);
      ++lands;
      const int first_bad = r.keys - kv0;
      constexpr int kVecPerChunk = C::kRowBytes / 16;          // 16-byte vectors per chunk row
      constexpr int kVecPerRow = C::kVChunks * kVecPerChunk;  // per row, all chunks
      for (int i = static_cast<int>(threadIdx.x % 32); i < (Bn - first_bad) * kVecPerRow; i += 32) {
        const int row = first_bad + i / kVecPerRow, c = (i % kVecPerRow) / kVecPerChunk, v = i % kVecPerChunk;
        reinterpret_cast<uint4*>(sm.v_s(s) + c * Bn * C::kChunk + row * C::kChunk)[v] = make_uint4(0, 0, 0, 0);
      }
      atoms::fence_proxy_async_shared();
      __syncwarp();
      if (leader) sm90::mbar_arrive(sm.v_full(s));
    }
  });
}

}  // namespace flashprobe::kernels::dev
