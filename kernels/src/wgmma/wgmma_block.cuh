#pragma once
// What every warpgroup of a persistent wgmma block (wgmma_attn.cuh) knows: where the shared-memory
// regions and barriers are (WgmmaSmem, fixed for the kernel), and for each 128-row block of the
// work list (wgmma_config.h), which batch, head and rows it is and which key tiles it visits
// (WgmmaRows, identical in every thread). Producer and consumers walk the same list, so they agree
// on every row block and on the position of each of its tiles in the K/V ring without talking.
#include <cstdint>

#include "flashprobe/core/device.cuh"
#include "src/attn_common.cuh"
#include "src/wgmma/sm90_tma.cuh"
#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::dev {

// S: WgmmaConfig's kStagesWanted (0: the class's own stage count).
template <int D, int Dv, int S = 0>
struct WgmmaSmem {
  using C = WgmmaConfig<D, Dv, S>;
  std::uint8_t* base;  // 1024-byte aligned (the swizzle atoms and descriptors need it)

  FP_DEV std::uint16_t* q_s() const { return reinterpret_cast<std::uint16_t*>(base); }
  FP_DEV std::uint16_t* k_s(int s) const { return reinterpret_cast<std::uint16_t*>(base + C::kKOff + s * C::kKTileBytes); }
  FP_DEV std::uint16_t* v_s(int s) const { return reinterpret_cast<std::uint16_t*>(base + C::kVOff + s * C::kVTileBytes); }
  FP_DEV std::uint64_t* bar(int i) const { return reinterpret_cast<std::uint64_t*>(base + C::kBarOff) + i; }
  FP_DEV std::uint64_t* q_full() const { return bar(0); }
  FP_DEV std::uint64_t* q_empty() const { return bar(1); }
  FP_DEV std::uint64_t* k_full(int s) const { return bar(2 + s); }
  FP_DEV std::uint64_t* v_full(int s) const { return bar(2 + C::kStages + s); }
  FP_DEV std::uint64_t* k_empty(int s) const { return bar(2 + 2 * C::kStages + s); }
  FP_DEV std::uint64_t* v_empty(int s) const { return bar(2 + 3 * C::kStages + s); }
  FP_DEV std::uint64_t* v_land() const { return bar(2 + 4 * C::kStages); }

  // Barrier counts: full barriers complete on one arrival plus the promised bytes, empty ones when
  // every consumer warpgroup has released the stage (or Q).
  FP_DEV void init_barriers() const {
    sm90::mbar_init(q_full(), 1);
    sm90::mbar_init(q_empty(), C::kConsumers);
    for (int s = 0; s < C::kStages; ++s) {
      sm90::mbar_init(k_full(s), 1);
      sm90::mbar_init(v_full(s), 1);
      sm90::mbar_init(k_empty(s), C::kConsumers);
      sm90::mbar_init(v_empty(s), C::kConsumers);
    }
    sm90::mbar_init(v_land(), 1);
    sm90::mbar_fence_init();
  }
};

template <int D, int Dv, int S = 0>
FP_DEV WgmmaSmem<D, Dv, S> wgmma_smem(std::uint8_t* smem_raw) {
  return {reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                          ~static_cast<std::uintptr_t>(1023))};
}

// One 128-row block: its head and batch, its rows, and the key tiles some row of it sees.
struct WgmmaRows {
  int h, b, hk;   // query head, batch, kv head
  int keys;       // keys of batch b
  int i0;         // first query row
  int kv_first;   // first key of tile 0 (a multiple of kBn)
  int ntiles;     // key tiles with a key visible to some row of the block (0: none)
  FP_DEV int kv0(int t, int bn) const { return kv_first + t * bn; }
};

template <int D, int Dv>
FP_DEV WgmmaRows wgmma_rows(const Params& p, const WgmmaWorkList::RowBlock& rb) {
  using C = WgmmaConfig<D, Dv>;
  WgmmaRows r;
  r.h = rb.h;
  r.b = rb.b;
  r.hk = kv_head<Bug::none>(p, r.h);
  r.keys = keys_of(p, r.b);
  r.i0 = rb.m * C::kBm;
  std::int64_t blo = 1, bhi = 0;
  const int last = (r.i0 + C::kBm < p.sq ? r.i0 + C::kBm : p.sq) - 1;
  if (r.i0 <= last) {
    std::int64_t t0, t1;
    visible_range<Bug::none>(p, r.b, r.i0, blo, t0);
    visible_range<Bug::none>(p, r.b, last, t1, bhi);
  }
  // lo >= 0 and hi < keys: both fit an int, and so does every tile start below hi.
  const std::int64_t first = blo > 0 ? (blo / C::kBn) * C::kBn : 0;
  r.kv_first = static_cast<int>(first);
  r.ntiles = blo <= bhi ? static_cast<int>((bhi - first) / C::kBn + 1) : 0;
  return r;
}

// wgmma/align=sector: the box shifts of a row block (sector_shift, wgmma_config.h). qk: Q's and K's
// (equal, so that S adds the same columns; K's rows decide, as every row block reads all of its K
// tiles and its Q once); v: V's, which O's columns carry (accumulator column n is dim n - v).
struct WgmmaShifts {
  int qk, v;
};
template <int D, int Dv>
FP_DEV WgmmaShifts wgmma_shifts(const Params& p, const WgmmaRows& r) {
  using C = WgmmaConfig<D, Dv>;
  const auto at = [&](const void* base, const DevStrides& st) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(base)) +
           2 * static_cast<std::uint64_t>(r.b * st.b + r.hk * st.h);
  };
  return {sector_shift(at(p.k, p.ks), 2 * p.ks.s, p.sk, p.d, D), sector_shift(at(p.v, p.vs), 2 * p.vs.s, p.sk, p.dv, C::kDv)};
}

// A walk over this block's row blocks in order:
//   for_each_row_block<D, Dv>(p, [&](const WgmmaRows& r) { ... });
template <int D, int Dv, class F>
FP_DEV void for_each_row_block(const Params& p, F&& f) {
  const WgmmaWorkList wl = work_list_of<D>(p.sq, p.hq, p.batch, p.causal != CausalMode::none);
  const int items = static_cast<int>(wl.items());  // <= INT32_MAX (wgmma_supports)
  for (int w = static_cast<int>(blockIdx.x); w < items; w += static_cast<int>(gridDim.x)) {
    const int n = wl.count(w);
    for (int k = 0; k < n; ++k) f(wgmma_rows<D, Dv>(p, wl.row_block(w, k)));
  }
}

// The same walk, each row block with the one after it in this block's walk (its ntiles < 0 when
// there is none): for consumers that start the next row block's first product before finishing
// the current one (wgmma/carry=on, wgmma_consumer_carry.cuh) and for a producer that prefetches the
// next row block into the L2 (wgmma/l2ahead=on, wgmma_producer.cuh). The order is
// for_each_row_block's, which the shipped producer and consumers walk.
//   for_each_row_block_ahead<D, Dv>(p, [&](const WgmmaRows& r, const WgmmaRows& next) { ... });
template <int D, int Dv, class F>
FP_DEV void for_each_row_block_ahead(const Params& p, F&& f) {
  const WgmmaWorkList wl = work_list_of<D>(p.sq, p.hq, p.batch, p.causal != CausalMode::none);
  const int items = static_cast<int>(wl.items());  // <= INT32_MAX (wgmma_supports)
  int w = static_cast<int>(blockIdx.x), k = 0;
  if (w >= items) return;
  WgmmaRows cur = wgmma_rows<D, Dv>(p, wl.row_block(w, 0));
  for (;;) {
    int w2 = w, k2 = 0;
    const bool more = wl.next_in_walk(w, k, static_cast<int>(gridDim.x), w2, k2);
    WgmmaRows next{};
    next.ntiles = -1;
    if (more) next = wgmma_rows<D, Dv>(p, wl.row_block(w2, k2));
    f(static_cast<const WgmmaRows&>(cur), static_cast<const WgmmaRows&>(next));
    if (!more) return;
    cur = next;
    w = w2;
    k = k2;
  }
}

}  // namespace flashprobe::kernels::dev
