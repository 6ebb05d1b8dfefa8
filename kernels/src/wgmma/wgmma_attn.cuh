#pragma once
// wgmma: FlashAttention forward for Hopper (sm_90a) on warpgroup matrix instructions fed by the
// tensor memory accelerator (TMA). One block per (128 query rows, head, batch), two warpgroups of
// 64 query rows each (no separate producer warp: with 288 threads ptxas budgets registers as for
// three warpgroups, 168 per thread, and the accumulators spill):
//   thread 0 issues the TMA loads: the Q tile once, K and V tiles of kBn keys into a kStages-deep
//     ring in shared memory (128-byte swizzle, 64 dims per box), each stage guarded by "full"
//     barriers (transaction bytes) and an "empty" barrier every consumer thread arrives on. It never
//     waits for the other warpgroup unless the tile it needs next is not loaded: refills are tried
//     without blocking at the top of each tile (mbarrier test_wait), so one warpgroup may run up to
//     kStages - 1 tiles ahead of the other;
//   each warpgroup, per key tile:
//     S = Q K^T       wgmma SS m64n{kBn}k16, Q and K straight from the swizzled tiles (K-major)
//     online softmax  on the accumulators, row structure from derive_c_rows of the atom's C layout
//     P               packed in registers as the A operand of the next product: derive_wide_c_to_a
//                     proves that k-step ks of P·V is accumulator slots of the same thread
//     O += P V        wgmma RS m64n{D}k16 with B = V read N-major (imm-trans-b), no transposed copy
//   at the end O /= l and LSE = m + log(l) (natural log); empty rows O = 0, LSE = -inf.
// Masking (causal with either alignment, windows, per-batch key counts, soft-cap, ALiBi) is the
// mma kernel's, written once in attn_common.cuh: tiles outside the block's visible key range are
// never loaded, tiles that every row of a warpgroup sees whole skip the per-score compare, keys past
// the tensor arrive as zeros from the TMA and are masked; V rows past keys(b) inside the tensor are
// zeroed in shared memory before use (0 * NaN would reach P·V).
// Register placement comes from the atom (SM90_64xNx16_Layout, checked against the registry and the
// H100 probe); the shared-memory layouts are the canonical ones of the wgmma matrix descriptor:
//   Q, K  [rows][64] per 64-dim chunk, 128-byte swizzle, K-major: SBO = 1024 (8 rows), start + 32 B
//         per k-step of 16 dims inside a chunk
//   V     the same tile read as B[k = key][n = dim], N-major: LBO = next 64-dim chunk, SBO = 8 keys
#include <cstdint>

#include "flashprobe/atoms/sm90_wgmma.cuh"
#include "flashprobe/core/device.cuh"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"
#include "src/wgmma/sm90_tma.cuh"
#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::dev {

template <class E>
struct WgmmaOps;
template <>
struct WgmmaOps<F16> {
  template <int N>
  using Op = atoms::SM90_64xNx16_F32F16<N>;
};
template <>
struct WgmmaOps<BF16> {
  template <int N>
  using Op = atoms::SM90_64xNx16_F32BF16<N>;
};

// Local row rr of the S accumulators and of the O accumulators is the same query row in every
// thread (the rescale by alpha and the final division rely on it).
template <class SL, class OL>
constexpr bool same_local_rows(const atoms::CRows<SL>& rs, const atoms::CRows<OL>& ro) {
  if (rs.rows != ro.rows) return false;
  for (int l = 0; l < SL::kWave; ++l)
    for (int q = 0; q < OL::kC; ++q)
      if (OL::c(l, q).row != SL::c(l, atoms::first_slot_of_row<SL>(rs, ro.local[q])).row) return false;
  return true;
}

template <class E, int D>
__global__ __launch_bounds__(WgmmaConfig<D>::kThreads, 1) void wgmma_fwd(const __grid_constant__ Params p,
                                                                          const __grid_constant__ CUtensorMap tq,
                                                                          const __grid_constant__ CUtensorMap tk,
                                                                          const __grid_constant__ CUtensorMap tv) {
#if !defined(FP_ATOM_SM90A)
  (void)p, (void)tq, (void)tk, (void)tv;
  fp_dev::trap();  // sm_90a only; the registry never launches it elsewhere
#else
  using C = WgmmaConfig<D>;
  constexpr int Bn = C::kBn;
  using SOp = typename WgmmaOps<E>::template Op<Bn>;  // S = Q K^T, 64 x Bn per warpgroup
  using OOp = typename WgmmaOps<E>::template Op<D>;   // O += P V, 64 x D
  using SL = atoms::SM90_64xNx16_Layout<Bn>;
  using OL = atoms::SM90_64xNx16_Layout<D>;
  constexpr atoms::CRows<SL> kRows = atoms::derive_c_rows<SL>();
  constexpr atoms::CRows<OL> kORows = atoms::derive_c_rows<OL>();
  constexpr atoms::WideCToA<OL, SL> kP = atoms::derive_wide_c_to_a<OL, SL>();
  static_assert(kRows.consistent && kORows.consistent, "every thread must group its C slots into rows alike");
  static_assert(kP.in_place, "P must be reusable from the S accumulators as the A operand of P·V");
  static_assert(same_local_rows<SL, OL>(kRows, kORows), "S and O local rows must be the same query rows");
  constexpr int R = kRows.rows;
  constexpr int kPSteps = Bn / 16;

  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* const smem = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~static_cast<std::uintptr_t>(1023));
  auto* const q_s = reinterpret_cast<std::uint16_t*>(smem);
  const auto k_s = [&](int s) { return reinterpret_cast<std::uint16_t*>(smem + C::kKOff + s * C::kTileBytes); };
  const auto v_s = [&](int s) { return reinterpret_cast<std::uint16_t*>(smem + C::kVOff + s * C::kTileBytes); };
  auto* const bars = reinterpret_cast<std::uint64_t*>(smem + C::kBarOff);
  std::uint64_t* const q_full = bars;
  std::uint64_t* const k_full = bars + 1;
  std::uint64_t* const v_full = bars + 1 + C::kStages;
  std::uint64_t* const empty = bars + 1 + 2 * C::kStages;

  const int tid = static_cast<int>(threadIdx.x);
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int hk = kv_head<Bug::none>(p, h);
  const int keys = keys_of(p, b);
  // Heavy causal tiles first (the last query rows see the most keys), as in mma.
  const int i0 = static_cast<int>(gridDim.x - 1 - blockIdx.x) * C::kBm;

  // The block's key range and its tiles (every thread computes the same).
  std::int64_t blo = 1, bhi = 0;
  const int last = (i0 + C::kBm < p.sq ? i0 + C::kBm : p.sq) - 1;
  if (i0 <= last) {
    std::int64_t t0, t1;
    visible_range<Bug::none>(p, b, i0, blo, t0);
    visible_range<Bug::none>(p, b, last, t1, bhi);
  }
  const std::int64_t kv_first = blo > 0 ? (blo / Bn) * Bn : 0;
  const int ntiles = blo <= bhi ? static_cast<int>((bhi - kv_first) / Bn + 1) : 0;

  if (tid == 0) {
    sm90::mbar_init(q_full, 1);
    for (int s = 0; s < C::kStages; ++s) {
      sm90::mbar_init(&k_full[s], 1);
      sm90::mbar_init(&v_full[s], 1);
      sm90::mbar_init(&empty[s], C::kConsumers * 128);
    }
    sm90::mbar_fence_init();
  }
  __syncthreads();

  // The producer (thread 0): tiles [0, issued) have been requested. Tile n reuses the stage of tile
  // n - kStages, free once all 256 consumer threads arrived on its empty barrier.
  int issued = 0;
  const auto issue = [&](int n) {
    const int s = n % C::kStages;
    const int kv0 = static_cast<int>(kv_first) + n * Bn;
    sm90::mbar_expect_tx(&k_full[s], C::kTileBytes);
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c)
      sm90::tma_load_4d(k_s(s) + c * Bn * C::kChunk, &tk, &k_full[s], c * C::kChunk, kv0, hk, b);
    sm90::mbar_expect_tx(&v_full[s], C::kTileBytes);
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c)
      sm90::tma_load_4d(v_s(s) + c * Bn * C::kChunk, &tv, &v_full[s], c * C::kChunk, kv0, hk, b);
  };
  // Requests tile `need` (blocking on its stage if it must) and then, without blocking, as many
  // further tiles as have a free stage.
  const auto produce = [&](int need) {
    while (issued < ntiles && issued < need + C::kStages) {
      const bool must = issued <= need;
      if (issued >= C::kStages) {
        std::uint64_t* e = &empty[issued % C::kStages];
        const int par = (issued / C::kStages - 1) & 1;
        if (must) sm90::mbar_wait(e, par);
        else if (!sm90::mbar_test(e, par)) break;
      }
      issue(issued++);
    }
  };
  if (tid == 0 && ntiles > 0) {  // a block without visible keys loads nothing and never waits
    sm90::tma_prefetch_map(&tk);
    sm90::tma_prefetch_map(&tv);
    sm90::mbar_expect_tx(q_full, C::kQBytes);
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c) sm90::tma_load_4d(q_s + c * C::kBm * C::kChunk, &tq, q_full, c * C::kChunk, i0, h, b);
    produce(0);
  }

  // Warpgroup wg owns rows r0 .. r0 + 63; lt is the thread's "lane" in the atom's layout.
  const int wg = tid / 128;
  const int lt = tid % 128;
  const int r0 = i0 + wg * 64;
  const std::int64_t diag = diag_of<Bug::none>(p, b);

  // Per local row: query index, visible keys [lo, hi] and diagonal position, in 32 bits (keys and
  // rows are ints; lo and hi are clamped to [0, INT_MAX] and [-1, INT_MAX], which keeps every
  // comparison with a key index unchanged), and the softmax state.
  int row_i[R], lo_r[R], hi_r[R], idiag_r[R];
  float m_r[R], l_r[R];
  const auto clamp32 = [](std::int64_t x, std::int64_t lo) {
    return static_cast<int>(x < lo ? lo : (x > INT32_MAX ? INT32_MAX : x));
  };
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    row_i[rr] = r0 + SL::c(lt, atoms::first_slot_of_row<SL>(kRows, rr)).row;
    std::int64_t lo = 1, hi = 0;
    if (row_i[rr] < p.sq) visible_range<Bug::none>(p, b, row_i[rr], lo, hi);
    lo_r[rr] = clamp32(lo, 0);
    hi_r[rr] = clamp32(hi, -1);
    idiag_r[rr] = static_cast<int>(row_i[rr] + diag);  // |i + keys - sq| < 2^31
    m_r[rr] = kNegInf;
    l_r[rr] = 0.f;
  }
  // Tiles inside [lo(last row), hi(first row)] of the warpgroup are seen whole by all its rows.
  std::int64_t wg_lo_max = INT64_MAX, wg_hi_min = INT64_MIN;
  if (r0 < p.sq) {
    std::int64_t t0, t1;
    const int wlast = (r0 + 64 < p.sq ? r0 + 64 : p.sq) - 1;
    visible_range<Bug::none>(p, b, wlast, wg_lo_max, t0);
    visible_range<Bug::none>(p, b, r0, t1, wg_hi_min);
    if (r0 + 64 > p.sq) wg_lo_max = INT64_MAX;  // rows past Sq see nothing: never a full tile
  }
  const bool extras = p.softcap > 0.f || p.alibi != nullptr;
  const float scale_log2 = p.scale * kLog2e;

  float o[OL::kC];
#pragma unroll
  for (int q = 0; q < OL::kC; ++q) o[q] = 0.f;

  if (ntiles > 0) sm90::mbar_wait(q_full, 0);
  // Descriptors: Q and K K-major (SBO = 8 rows of 128 B; LBO unused), V N-major (LBO = the next
  // 64-dim chunk, kBn rows of 128 B further; SBO = the next 8 keys). Moved by byte offsets.
  const sm90::DescSw128 dq = sm90::desc_sw128(smem + C::q_rows(wg), C::kKLbo, C::kSbo);  // 1024-byte aligned
  const sm90::DescSw128 dk = sm90::desc_sw128(k_s(0), C::kKLbo, C::kSbo);
  const sm90::DescSw128 dv = sm90::desc_sw128(v_s(0), C::kVLbo, C::kSbo);

  // --- The steps both schedules are made of ---------------------------------------------------
  // S(t) = Q K(t)^T over D / 16 k-steps (the first overwrites the accumulators), committed as a group.
  const auto issue_s = [&](float (&sc)[SL::kC], int st) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      SOp::ss(sc, dq.at(C::q_start(kk)), dk.at(C::k_start(st, kk)), kk > 0 ? 1 : 0);
    }
    atoms::wgmma_commit();
  };
  // O += P V: B[k = key][n = dim] read N-major from the row-major V tile of stage st.
  std::uint32_t pa[kPSteps][4];  // P in the A layout
  const auto issue_pv = [&](int st) {
#pragma unroll
    for (int ks = 0; ks < kPSteps; ++ks) OOp::rs_bmn(o, pa[ks], dv.at(C::v_start(st, ks)), 1);
    atoms::wgmma_commit();
  };
  // V rows past keys(b) but inside the tensor (a padded cache with per-batch lengths) hold whatever
  // the cache holds, NaN included, and 0 * NaN is NaN in P·V: zero them (the TMA zero-fills only
  // rows past the tensor). Uniform over the block: both warpgroups meet at the barrier.
  const auto zero_v_tail = [&](int st, int tile_kv0) {
    const int first_bad = keys - tile_kv0;
    if (first_bad >= Bn || keys >= p.sk) return;
    constexpr int kVecPerRow = C::kChunks * 8;  // 16-byte vectors per row, all chunks
    for (int i = tid; i < (Bn - first_bad) * kVecPerRow; i += C::kThreads) {
      const int row = first_bad + i / kVecPerRow, c = (i % kVecPerRow) / 8, v = i % 8;
      reinterpret_cast<uint4*>(v_s(st) + c * Bn * C::kChunk + row * C::kChunk)[v] = make_uint4(0, 0, 0, 0);
    }
    atoms::fence_proxy_async_shared();  // the wgmma reads shared memory through the async proxy
    __syncthreads();
  };
  // Softmax of tile kv0 on the finished S accumulators: base-2 scores, mask (same fast paths as
  // mma), row maxima across the row's lanes, alpha = exp2(m_old - m_new), P = exp2(S - m) in place,
  // row sums per thread (combined across lanes once, at the end). O is not touched here.
  const auto softmax = [&](float (&sc)[SL::kC], int kv0, float (&alpha)[R]) {
#pragma unroll
    for (int q = 0; q < SL::kC; ++q) atoms::wgmma_fence_operand(sc[q]);
    float mnew[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) mnew[rr] = m_r[rr];
    const bool full_tile = kv0 >= wg_lo_max && kv0 + Bn - 1 <= wg_hi_min;
    if (!extras && full_tile) {
#pragma unroll
      for (int q = 0; q < SL::kC; ++q) {
        sc[q] *= scale_log2;
        mnew[kRows.local[q]] = fmaxf(mnew[kRows.local[q]], sc[q]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < SL::kC; ++q) {
        const int rr = kRows.local[q];
        const int j = kv0 + SL::c(lt, q).col;
        float v = extras ? score(p, sc[q], h, idiag_r[rr], j) * kLog2e : sc[q] * scale_log2;
        if (j < lo_r[rr] || j > hi_r[rr]) v = kNegInf;
        sc[q] = v;
        mnew[rr] = fmaxf(mnew[rr], v);
      }
    }
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int bit = 1; bit < 32; bit <<= 1)
        if (kRows.lane_mask & bit) mnew[rr] = fmaxf(mnew[rr], fp_dev::shfl_xor(mnew[rr], bit, 32));
    static_assert(kRows.lane_mask < 32, "a row's threads must sit in one warp (shuffle reductions)");
    // A row whose max is still -inf has nothing to rescale (no NaN from a fully masked tile).
    float muse[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      alpha[rr] = m_r[rr] == kNegInf ? 0.f : exp2f(m_r[rr] - mnew[rr]);
      m_r[rr] = mnew[rr];
      muse[rr] = mnew[rr] == kNegInf ? 0.f : mnew[rr];
      l_r[rr] *= alpha[rr];
    }
#pragma unroll
    for (int q = 0; q < SL::kC; ++q) {
      const int rr = kRows.local[q];
      sc[q] = exp2f(sc[q] - muse[rr]);
      l_r[rr] += sc[q];
    }
  };
  const auto rescale_o_pack_p = [&](const float (&sc)[SL::kC], const float (&alpha)[R]) {
#pragma unroll
    for (int q = 0; q < OL::kC; ++q) o[q] *= alpha[kORows.local[q]];
#pragma unroll
    for (int ks = 0; ks < kPSteps; ++ks)
#pragma unroll
      for (int r = 0; r < 4; ++r) pa[ks][r] = to_bits2<E>(sc[kP.slot[ks][2 * r]], sc[kP.slot[ks][2 * r + 1]]);
  };
  const auto fence_o = [&] {
#pragma unroll
    for (int q = 0; q < OL::kC; ++q) atoms::wgmma_fence_operand(o[q]);
  };

  // Per tile: S, softmax, then P·V; the two warpgroups drift freely, so one's softmax tends to
  // overlap the other's products. (Issuing S(t) with P(t-1)V(t-1) and taking turns between the
  // warpgroups measured slower on the H100: WGMMA_NOTES.md, versions v2 and v3.)
  for (int t = 0; t < ntiles; ++t) {
    const int st = t % C::kStages, parity = (t / C::kStages) & 1;
    const int kv0 = static_cast<int>(kv_first) + t * Bn;
    float sc[SL::kC], alpha[R];
    if (tid == 0) produce(t);
    __syncwarp();  // warp 0 reconverges before the warpgroup-wide (.aligned) wgmma instructions
    sm90::mbar_wait(&k_full[st], parity);
    atoms::wgmma_fence();
    issue_s(sc, st);
    atoms::wgmma_wait<0>();
    softmax(sc, kv0, alpha);
    rescale_o_pack_p(sc, alpha);
    sm90::mbar_wait(&v_full[st], parity);
    zero_v_tail(st, kv0);
    fence_o();
    atoms::wgmma_fence();
    issue_pv(st);
    atoms::wgmma_wait<0>();
    fence_o();
    sm90::mbar_arrive(&empty[st]);  // this stage may be refilled
  }

  // Finish: row sums across the row's lanes, normalise, store O and the LSE.
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int bit = 1; bit < 32; bit <<= 1)
      if (kRows.lane_mask & bit) l_r[rr] += fp_dev::shfl_xor(l_r[rr], bit, 32);
#pragma unroll
  for (int q = 0; q < OL::kC; ++q) {
    const int rr = kORows.local[q];
    if (row_i[rr] >= p.sq) continue;
    const float inv = l_r[rr] > 0.f ? 1.f / l_r[rr] : 0.f;
    store(p.o, offset4(p.os, b, row_i[rr], h, OL::c(lt, q).col), p.out_dtype, o[q] * inv);
  }
  if ((lt & kRows.lane_mask) == 0) {
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
      if (row_i[rr] < p.sq)
        p.lse[(static_cast<std::int64_t>(b) * p.hq + h) * p.sq + row_i[rr]] =
            l_r[rr] > 0.f ? (m_r[rr] + log2f(l_r[rr])) * kLn2 : kNegInf;
  }
#endif
}

}  // namespace flashprobe::kernels::dev
