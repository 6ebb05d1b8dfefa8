#pragma once
// mma_bwd_fa2 / mma_bwd_det_fa2's dK/dV kernel (the row term, the deterministic dQ kernel and the dQ
// conversion are mma_bwd's, mma_bwd.cuh): FlashAttention-2's block (mma_bwd_fa2_plan.h) over an atom.
// One block per (128 keys, kv head, batch); per query tile of the group's heads that sees a key:
//   S^T = K Q^T, dP^T = V dO^T          wave tile 32 keys x Br / 2 queries (A = K, V; B = Q, dO n-major)
//   P^T, dS^T -> shared memory           [key][query], input type, one 32-bit store per C slot pair
//   barrier
//   dV += P^T dO, dK += dS^T Q           wave tile 32 keys x D / 2 (A = P^T, dS^T row-major; B k-major)
//   fast mode: dQ = dS K                 wave tile 32 queries x 32 dims (A = dS: the [key][query] tile
//                                        read k-major with .trans; B = K k-major), fp32 atomics, two
//                                        neighbouring columns per red.v2
// and the next step's first barrier frees P^T, dS^T and the tile stage. Every fragment is placed by
// Atom::c and the ldmatrix derivations (ldsm_feeds_a m- and k-major, ldsm_feeds_b).
#include <cstdint>
#include <type_traits>

#include "src/mma/mma_bwd.cuh"
#include "src/mma/mma_bwd_fa2_plan.h"

namespace flashprobe::kernels::dev {

template <class Atom>
constexpr bool mma_bwd_fa2_atom_ok() {
  return mma_bwd_atom_ok<Atom>() && c_pairs_adjacent<Atom>() &&
         atoms::ldsm_feeds_a<Atom, atoms::SM75_LDMATRIX_X4_Layout<true>, false>() && Atom::M == 16 && Atom::N == 8 &&
         Atom::K == 16;
}

// acc[MT][NT] += A B over KT k-steps for one wave: A's m-tile m and k-step k at byte offset
// 2 (m AM + k AK) from the lane address a (ldmatrix .trans when ATrans: a k-major tile), B's pair of
// n-tiles n, n + 1 and k-step k at 2 (n BN + k BK) from b (.trans when BTrans: a k-major tile). Each
// B load feeds MT x 2 mma; A's MT fragments of one k-step are live at once.
template <class Atom, int MT, int NT, int KT, bool ATrans, int AM, int AK, bool BTrans, int BN, int BK>
FP_DEV void wave_gemm(float (&acc)[MT][NT][Atom::kC], std::uint32_t a, std::uint32_t b) {
  static_assert(NT % 2 == 0, "ldmatrix.x4 reads two n-tiles of B");
  static_for<KT>([&](auto k_) {
    constexpr int k = decltype(k_)::value;
    std::uint32_t af[MT][4];
    static_for<MT>([&](auto m_) {
      constexpr int m = decltype(m_)::value;
      ldsm_x4<ATrans, 2 * (m * AM + k * AK)>(a, af[m]);
    });
    static_for<NT / 2>([&](auto np_) {
      constexpr int n = 2 * decltype(np_)::value;
      std::uint32_t r[4];
      ldsm_x4<BTrans, 2 * (n * BN + k * BK)>(b, r);
      const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        Atom::mma(acc[m][n], af[m], b0);
        Atom::mma(acc[m][n + 1], af[m], b1);
      }
    });
  });
}

// The step's schedule (BWD_NOTES.md has the counts and the measurements that chose it): a wave tile that
// every one of its (query, key) pairs sees takes a P^T / dS^T path without the per-element mask (one
// uniform branch per tile); the step's head and tile come from counters; Q and dO are copied by
// bwd_fill_tile_lean (one 64-bit base per tile, a constant stride per copy) and dQ's atomics are
// addressed from one row pointer per step.
template <class Atom, class E, int D, Bug bug, bool kAtomicDq, bool Extras>
__global__ __launch_bounds__(MmaBwdFa2Plan<D>::kWaves * Atom::kWave) void mma_bwd_fa2_dkdv(BwdParams bp) {
  static_assert(mma_bwd_fa2_atom_ok<Atom>(),
                "mma_bwd_fa2 needs ldmatrix-fed operands (A m- and k-major), C slot pairs on neighbouring columns");
  using P = MmaBwdFa2Plan<D>;
  constexpr int M = Atom::M, N = Atom::N, K = Atom::K, kLd = P::kLd, kPLd = P::kPLd, Br = P::kBr, kThreads = P::kWaves * Atom::kWave;
  constexpr int kSM = P::kSKeys / M, kSN = P::kSRows / N;   // m- and n-tiles of a wave's S^T
  constexpr int kVM = P::kKKeys / M, kVN = P::kKDims / N;   // of its dK, dV
  constexpr int kQM = P::kQRows / M, kQN = P::kQDims / N;   // of its dQ
  const Params& p = bp.f;
  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave, wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int tid = static_cast<int>(threadIdx.x);
  const int kb = static_cast<int>(blockIdx.x) * P::kBc, kvh = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int keys = keys_of(p, b);
  int lo_off, hi_off;
  bwd_offsets32<bug>(p, b, lo_off, hi_off);
  const int diag = static_cast<int>(diag_of<Bug::none>(p, b));
  int t_first, ntiles;
  mask::query_tiles_seeing(kb, P::kBc, keys, p.sq, lo_off, hi_off, Br, t_first, ntiles);
  const int steps = ntiles * p.group;

  std::uint16_t* const sm = fp_dev::dynamic_smem<std::uint16_t>();
  std::uint16_t* const pt_s = sm + P::kP;
  std::uint16_t* const dst_s = sm + P::kDs;
  float* const lse_s = reinterpret_cast<float*>(reinterpret_cast<char*>(sm) + P::kLseBytes);  // [2][Br]
  float* const dvec_s = lse_s + 2 * Br;                                                        // [2][Br]

  const bool qvec = p.q_rows16 != 0, dovec = bp.dout_rows16 != 0, kvvec = p.kv_rows16 != 0;
  // The tiles of query head h from row i0 into stage `stage`.
  const auto fill_step = [&](int stage, int h, int i0) {
    std::uint16_t* q = sm + P::kQd + 2 * stage * P::kQTile;
    const auto* qg = static_cast<const std::uint16_t*>(p.q) + (std::int64_t{b} * p.qs.b + std::int64_t{h} * p.qs.h);
    const auto* og = static_cast<const std::uint16_t*>(bp.dout) + (std::int64_t{b} * p.os.b + std::int64_t{h} * p.os.h);
    if (qvec) bwd_fill_tile_lean<Br, D, kThreads>(q, kLd, qg, p.qs.s, i0, p.sq);
    else bwd_fill_tile<Br, D, kThreads>(q, kLd, p.q, p.qs, b, h, i0, p.sq, false);
    if (dovec) bwd_fill_tile_lean<Br, D, kThreads>(q + P::kQTile, kLd, og, p.os.s, i0, p.sq);
    else bwd_fill_tile<Br, D, kThreads>(q + P::kQTile, kLd, bp.dout, p.os, b, h, i0, p.sq, false);
    for (int r = tid; r < Br; r += kThreads) {
      const int i = i0 + r;
      const std::int64_t row = (std::int64_t{b} * p.hq + h) * p.sq + i;
      lse_s[stage * Br + r] = i < p.sq ? p.lse[row] * kLog2e : 0.f;
      dvec_s[stage * Br + r] = i < p.sq ? bp.dvec[row] : 0.f;
    }
    cp_async_commit();
  };

  float dk[kVM][kVN][Atom::kC], dv[kVM][kVN][Atom::kC];
  const auto clear = [&] {
#pragma unroll
    for (int m = 0; m < kVM; ++m)
#pragma unroll
      for (int t = 0; t < kVN; ++t)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) dk[m][t][q] = dv[m][t][q] = 0.f;
  };
  clear();
  if (steps > 0) {
    bwd_fill_tile<P::kBc, D, kThreads>(sm + P::kK, kLd, p.k, p.ks, b, kvh, kb, keys, kvvec);
    bwd_fill_tile<P::kBc, D, kThreads>(sm + P::kV, kLd, p.v, p.vs, b, kvh, kb, keys, kvvec);
    fill_step(0, mask::q_head(kvh, 0, p.group), t_first * Br);
  }
  const float scale_log2 = p.scale * kLog2e;
  // The wave's tiles and its lane addresses (bytes): S^T's A rows of K and V, the B rows of Q / dO
  // (n-major, this wave's queries; plus the stage), dV/dK's A rows of P^T / dS^T and B of dO / Q
  // (k-major), dQ's A of dS (k-major) and B of K (k-major).
  const int sk0 = P::s_key0(wave), sr0 = P::s_row0(wave);
  const int vk0 = P::kv_key0(wave), vd0 = P::kv_dim0(wave);
  const int qr0 = P::q_row0(wave), qd0 = P::q_dim0(wave);
  const std::uint32_t base = smem_u32(sm);
  const std::uint32_t k_a = base + 2 * (P::kK + (sk0 + LdsmLanes::a_row(lane)) * kLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t v_a = base + 2 * (P::kV + (sk0 + LdsmLanes::a_row(lane)) * kLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t qd_n = base + 2 * (P::kQd + (sr0 + LdsmLanes::bn_row(lane)) * kLd + 8 * LdsmLanes::bn_chunk(lane));
  const std::uint32_t qd_k = base + 2 * (P::kQd + LdsmLanes::bk_row(lane) * kLd + vd0 + 8 * LdsmLanes::bk_chunk(lane));
  const std::uint32_t pt_a = base + 2 * (P::kP + (vk0 + LdsmLanes::a_row(lane)) * kPLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t ds_a = base + 2 * (P::kDs + (vk0 + LdsmLanes::a_row(lane)) * kPLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t dsq_a = base + 2 * (P::kDs + LdsmLanes::akm_row(lane) * kPLd + qr0 + 8 * LdsmLanes::akm_chunk(lane));
  const std::uint32_t k_k = base + 2 * (P::kK + LdsmLanes::bk_row(lane) * kLd + qd0 + 8 * LdsmLanes::bk_chunk(lane));

  int tile = 0, member = 0;  // step = member * ntiles + tile
  for (int step = 0; step < steps; ++step) {
    const int stage = step & 1;
    const int h = mask::q_head(kvh, member, p.group), i0 = (t_first + tile) * Br;
    const bool wrap = tile + 1 == ntiles;
    const int tile_next = wrap ? 0 : tile + 1, member_next = wrap ? member + 1 : member;
    if constexpr (bug == Bug::bwd_mma_gqa_unsummed) {
      if (step % ntiles == 0) clear();
    }
    cp_async_wait<0>();
    fp_dev::barrier();  // this step's tiles are in; every wave is done with P^T, dS^T and the other stage
    if (step + 1 < steps) fill_step(stage ^ 1, mask::q_head(kvh, member_next, p.group), (t_first + tile_next) * Br);
    const std::uint32_t stage_b = 2 * 2 * stage * P::kQTile;  // bytes from Q of stage 0 to this stage's Q
    const float* lse_t = lse_s + stage * Br;
    const float* dvec_t = dvec_s + stage * Br;

    {
      // S^T = K Q^T and dP^T = V dO^T over the wave's kSM x kSN tiles.
      float s[kSM][kSN][Atom::kC], dp[kSM][kSN][Atom::kC];
#pragma unroll
      for (int m = 0; m < kSM; ++m)
#pragma unroll
        for (int t = 0; t < kSN; ++t)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) s[m][t][q] = dp[m][t][q] = 0.f;
      const std::uint32_t q_n = qd_n + stage_b, do_n = q_n + 2 * P::kQTile;
      wave_gemm<Atom, kSM, kSN, D / K, false, M * kLd, K, false, N * kLd, K>(s, k_a, q_n);
      wave_gemm<Atom, kSM, kSN, D / K, false, M * kLd, K, false, N * kLd, K>(dp, v_a, do_n);
      // P^T and dS^T into shared memory in the input type, masked per element only where the wave's
      // tile is not wholly visible (a uniform test).
      const int is = i0 + sr0, js = kb + sk0;
      const bool full = is + P::kSRows <= p.sq && js + P::kSKeys <= keys && js - (is + P::kSRows - 1) >= lo_off &&
                        js + P::kSKeys - 1 - is <= hi_off;
      // The elements of one C slot pair (row r of m-tile m, n-tile nt): P^T and dS^T, zero where
      // Masked and the pair is not visible.
      const auto pair = [&](auto masked_, int m, int nt, int r) {
        constexpr bool kMasked = decltype(masked_)::value;
        float pv[2], dsv[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const atoms::Coord c = Atom::c(lane, 2 * r + e);
          const int il = sr0 + nt * N + c.col, i = i0 + il, j = js + m * M + c.row;
          float fac;
          const float x = bwd_score2<Extras, bug>(p, s[m][nt][2 * r + e], scale_log2, h, i + diag, j, fac);
          float Pv = exp2_ftz(x - lse_t[il]);
          if (kMasked && (i >= p.sq || j >= keys || j - i < lo_off || j - i > hi_off)) Pv = 0.f;
          pv[e] = Pv;
          dsv[e] = bwd_ds<bug>(Pv, dp[m][nt][2 * r + e], dvec_t[il], fac);
        }
        const atoms::Coord c = Atom::c(lane, 2 * r);
        const int o = (sk0 + m * M + c.row) * kPLd + sr0 + nt * N + c.col;
        *reinterpret_cast<std::uint32_t*>(&pt_s[o]) = to_bits2<E>(pv[0], pv[1]);
        *reinterpret_cast<std::uint32_t*>(&dst_s[o]) = to_bits2<E>(dsv[0], dsv[1]);
      };
      const auto tile = [&](auto masked_) {
#pragma unroll
        for (int m = 0; m < kSM; ++m)
#pragma unroll
          for (int nt = 0; nt < kSN; ++nt)
#pragma unroll
            for (int r = 0; r < Atom::kC / 2; ++r) pair(masked_, m, nt, r);
      };
      if (full) tile(std::false_type{});
      else tile(std::true_type{});
    }
    fp_dev::barrier();  // every wave's P^T and dS^T are in

    // dV += P^T dO, dK += dS^T Q over the tile's queries (B k-major: ldmatrix .trans).
    {
      const std::uint32_t do_k = qd_k + stage_b + 2 * P::kQTile, q_k = qd_k + stage_b;
      wave_gemm<Atom, kVM, kVN, Br / K, false, M * kPLd, K, true, N, K * kLd>(dv, pt_a, do_k);
      wave_gemm<Atom, kVM, kVN, Br / K, false, M * kPLd, K, true, N, K * kLd>(dk, ds_a, q_k);
    }

    if constexpr (kAtomicDq) {
      // dQ_tile += dS K (A = dS: the [key][query] tile read k-major; B = K k-major), then atomics.
      float dq[kQM][kQN][Atom::kC];
#pragma unroll
      for (int m = 0; m < kQM; ++m)
#pragma unroll
        for (int t = 0; t < kQN; ++t)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) dq[m][t][q] = 0.f;
      wave_gemm<Atom, kQM, kQN, P::kBc / K, true, M, K * kPLd, true, N, K * kLd>(dq, dsq_a, k_k);
      // One pointer per step at the lane's first C slot (row i1, column x1); every pair is a row offset
      // (m-tile, slot row) times the workspace's row stride hq * D plus a column offset.
      const atoms::Coord c0 = Atom::c(lane, 0);
      const int i1 = i0 + qr0 + c0.row;
      float* const row1 = bp.dq_acc + ((std::int64_t{b} * p.sq + i1) * p.hq + h) * D + qd0 + c0.col;
      const std::int64_t rs = std::int64_t{p.hq} * D;
#pragma unroll
      for (int m = 0; m < kQM; ++m)
#pragma unroll
        for (int r = 0; r < Atom::kC / 2; ++r) {
          const atoms::Coord c = Atom::c(lane, 2 * r);
          const int dr = m * M + c.row - c0.row;
          if (i1 + dr < p.sq) {
            float* const row = row1 + dr * rs;
#pragma unroll
            for (int t = 0; t < kQN; ++t)
              red_add_f32x2(row + t * N + c.col - c0.col, dq[m][t][2 * r], dq[m][t][2 * r + 1]);
          }
        }
    }
    tile = tile_next;
    member = member_next;
  }

  // dK = scale * dS^T Q and dV, in the input type at K's and V's strides; keys past sk are not stored.
#pragma unroll
  for (int m = 0; m < kVM; ++m)
#pragma unroll
    for (int t = 0; t < kVN; ++t)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const atoms::Coord c = Atom::c(lane, q);
        const int j = kb + vk0 + m * M + c.row, x = vd0 + t * N + c.col;
        if (j < p.sk) {
          store(bp.dk, offset4(p.ks, b, j, kvh, x), p.dtype, dk[m][t][q] * p.scale);
          store(bp.dv, offset4(p.vs, b, j, kvh, x), p.dtype, dv[m][t][q]);
        }
      }
}

}  // namespace flashprobe::kernels::dev
