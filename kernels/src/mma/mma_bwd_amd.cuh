#pragma once
// mma_bwd_amd (flashprobe/kernels/backward.h): FlashAttention-2's backward on AMD's matrix units,
// written over an atom (gfx11/gfx12 WMMA, CDNA MFMA) the way the AMD forward is (mma_attn.cuh's
// generic path): every operand fragment is read from LDS through Atom::a / Atom::b, every
// accumulator element is placed through Atom::c, and a C fragment becomes an A operand by a write
// in the C layout and a read in the A layout of a per-wave LDS area (WMMA's and MFMA's C and A
// layouts are transposed across lanes: derive_c_to_a is never in place on AMD). Deterministic:
//   1. mma_bwd_rowdot (mma_bwd.cuh): D_i = rowsum(dO ∘ O), one wave per row, a fixed shuffle tree.
//   2. amd_bwd_dkdv: one block per (key block of kBc keys, kv head, batch), each wave owning
//      Atom::M keys. For every query head of the group and every query tile of kT rows that sees a
//      key of the block, in order:
//        S^T = K Q^T, dP^T = V dO^T     (A = the wave's K or V rows, B = Q or dO read n-major)
//        P^T = exp(S^T - LSE), dS^T = P^T (dP^T - D) (soft-cap, ALiBi: bwd_score2, bwd_ds), both
//            rounded to the input type and staged C layout -> A layout
//        dV += P^T dO, dK += dS^T Q     (B = dO or Q read k-major)
//   3. amd_bwd_dq: one block per (kBm query rows, head, batch), each wave owning Atom::M rows; the
//      key tiles of the block's hull in increasing order: S, dP, P and dS recomputed, dQ += dS K in
//      registers. A fixed reduction order, no atomics: bitwise identical over repeated runs.
// Correctness first: one LDS stage, scalar tile fills, operand pairs along k loaded as one 32-bit
// word only where the atom's layout puts them side by side in LDS (a/b_pairs_along_k).
// Rows and keys are 32-bit (the launcher bounds sq + sk, as mma_bwd's).
#include <cstdint>

#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/core/device.cuh"
#include "flashprobe/core/mask.h"
#include "flashprobe/core/mask_hull.h"
#include "src/attn_common.cuh"
#include "src/bwd_params.h"
#include "src/dtype.cuh"
#include "src/mma/mma_attn.cuh"
#include "src/mma/mma_bwd.cuh"
#include "src/mma/mma_bwd_amd_plan.h"

namespace flashprobe::kernels::dev {

// The atom's A fragment for the block at (row r0, column k0) of a row-major [m][k] LDS tile.
template <class Atom>
FP_DEV void load_a_rowmajor(std::uint32_t (&af)[Atom::kA / 2], const std::uint16_t* t, int ld, int r0, int k0, int lane) {
  constexpr bool kPairs = a_pairs_along_k<Atom>();
#pragma unroll
  for (int r = 0; r < Atom::kA / 2; ++r) {
    const atoms::Coord a0 = Atom::a(lane, 2 * r);
    [[maybe_unused]] const atoms::Coord a1 = Atom::a(lane, 2 * r + 1);
    if constexpr (kPairs)
      af[r] = lds32(&t[(r0 + a0.row) * ld + k0 + a0.col]);
    else
      af[r] = atoms::pack2(t[(r0 + a0.row) * ld + k0 + a0.col], t[(r0 + a1.row) * ld + k0 + a1.col]);
  }
}

// The atom's B fragment for the block at (k0, n0) of a k-major LDS tile (B[k][n] at t[k * ld + n]):
// dO and Q for dV and dK, K for dQ.
template <class Atom>
FP_DEV void load_b_kmajor(std::uint32_t (&bf)[Atom::kB / 2], const std::uint16_t* t, int ld, int k0, int n0, int lane) {
#pragma unroll
  for (int r = 0; r < Atom::kB / 2; ++r) {
    const atoms::Coord b0 = Atom::b(lane, 2 * r), b1 = Atom::b(lane, 2 * r + 1);
    bf[r] = atoms::pack2(t[(k0 + b0.row) * ld + n0 + b0.col], t[(k0 + b1.row) * ld + n0 + b1.col]);
  }
}

// The tile shapes, shared by the kernels, the launcher and the emulator's plan (mma_bwd_amd_plan.h
// holds the host constants they must equal: mma_bwd_amd_check.cu asserts it).
// 64 keys per dK/dV block (Waves = 64 / M: 4 WMMA waves of 16 keys, 2 MFMA waves of 32), query
// tiles of kT rows (dK/dV) and key tiles of kT keys (dQ): kT = 64 at D = 64, 32 at D = 128, so that
// each kernel's LDS stays under 64 KB (D = 128, dK/dV: K, V 34.8 KB + Q, dO 17.4 KB + P^T, dS^T
// 10.2 KB).
template <class Atom>
constexpr int amd_bwd_threads() {
  return kAmdBwdBlock / Atom::M * Atom::kWave;
}
template <class Atom, int D, int T>
struct AmdBwdConfig {
  static constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  static constexpr int kWaves = kAmdBwdBlock / M, kThreads = amd_bwd_threads<Atom>();
  static constexpr int kBc = kWaves * M;  // keys per dK/dV block, query rows per dQ block
  static constexpr int kT = T;            // query rows per dK/dV step, keys per dQ step
  static constexpr int kLd = D + 8;       // [row][dim] tiles, padded 16 bytes
  static constexpr int kSLd = T + 8;      // staging rows ([key][query] or [query][key])
  static constexpr int kKT = D / K;       // k-steps over the head dim
  static constexpr int kST = T / N;       // n-tiles of S^T / S (the tile's queries or keys)
  static constexpr int kPT = T / K;       // k-steps over the tile (dV, dK over queries; dQ over keys)
  static constexpr int kDT = D / N;       // n-tiles of dK, dV, dQ
  static constexpr int kLdsBytesDkdv = (2 * kBc * kLd + 2 * T * kLd + 2 * kBc * kSLd) * 2 + 2 * T * 4;
  static constexpr int kLdsBytesDq = (2 * kBc * kLd + 2 * T * kLd + kBc * kSLd) * 2 + 2 * kBc * 4;
  static_assert(kAmdBwdBlock % M == 0 && D % K == 0 && D % N == 0 && T % N == 0 && T % K == 0, "tile shapes");
  static_assert(kLdsBytesDkdv <= 65536 && kLdsBytesDq <= 65536, "LDS per workgroup is 64 KB");
};

// Rows r0 .. r0 + Rows - 1 of a [B, S, H, D] 16-bit tensor into a row-major LDS tile (rows at or past
// `rows` are zero), element by element at any strides.
template <int Rows, int D, int Threads>
FP_DEV void amd_bwd_fill(std::uint16_t* t, int ld, const void* g, const DevStrides& st, int b, int h, int r0, int rows) {
  const auto* gp = static_cast<const std::uint16_t*>(g);
  for (int e = static_cast<int>(threadIdx.x); e < Rows * D; e += Threads) {
    const int rr = e / D, x = e % D, r = r0 + rr;
    t[rr * ld + x] = r < rows ? gp[offset4(st, b, r, h, x)] : std::uint16_t{0};
  }
}

// Per row r of a tile of Rows query rows from i0: LSE * log2e and D (0 past sq).
template <int Rows, int Threads>
FP_DEV void amd_bwd_row_terms(float* lse_s, float* dvec_s, const BwdParams& bp, int b, int h, int i0) {
  const Params& p = bp.f;
  for (int r = static_cast<int>(threadIdx.x); r < Rows; r += Threads) {
    const int i = i0 + r;
    const std::int64_t row = (std::int64_t{b} * p.hq + h) * p.sq + i;
    lse_s[r] = i < p.sq ? p.lse[row] * kLog2e : 0.f;
    dvec_s[r] = i < p.sq ? bp.dvec[row] : 0.f;
  }
}

// Two products of one shape: acc0 = A0 B0^T and acc1 = A1 B1^T over the head dim, A0 and A1 the
// wave's M rows (from r0) of row-major [row][dim] LDS tiles, B0 and B1 read n-major from [n][dim]
// tiles (S^T, dP^T: K, V against Q, dO; S, dP: Q, dO against K, V). k-steps are not unrolled:
// unrolled, the compiler hoisted every fragment load and spilled.
template <class Atom, class C>
FP_DEV void amd_bwd_two_products(float (&acc0)[C::kST][Atom::kC], float (&acc1)[C::kST][Atom::kC], const std::uint16_t* a0,
                                 const std::uint16_t* a1, int r0, const std::uint16_t* b0, const std::uint16_t* b1, int lane) {
#pragma unroll
  for (int nt = 0; nt < C::kST; ++nt)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) acc0[nt][q] = acc1[nt][q] = 0.f;
#pragma unroll 1
  for (int kk = 0; kk < C::kKT; ++kk) {
    std::uint32_t x0[Atom::kA / 2], x1[Atom::kA / 2];
    load_a_rowmajor<Atom>(x0, a0, C::kLd, r0, kk * C::K, lane);
    load_a_rowmajor<Atom>(x1, a1, C::kLd, r0, kk * C::K, lane);
#pragma unroll
    for (int nt = 0; nt < C::kST; ++nt) {
      std::uint32_t bf[Atom::kB / 2];
      load_b_nmajor<Atom>(bf, b0, C::kLd, kk * C::K, nt * C::N, lane);
      Atom::mma(acc0[nt], x0, bf);
      load_b_nmajor<Atom>(bf, b1, C::kLd, kk * C::K, nt * C::N, lane);
      Atom::mma(acc1[nt], x1, bf);
    }
  }
}

// P and dS of one score (query i, key j) from its raw dot s and dp: 0 where i does not see j.
FP_DEV void amd_bwd_pds(const Params& p, float& s, float& dp, float lse2, float dvec, int h, int i, int j, int diag,
                        int keys, int lo_off, int hi_off) {
  float fac;
  const float x = bwd_score2<true, Bug::none>(p, s, p.scale * kLog2e, h, i + diag, j, fac);
  float P = exp2_ftz(x - lse2);
  if (i >= p.sq || j >= keys || j - i < lo_off || j - i > hi_off) P = 0.f;
  s = P;
  dp = bwd_ds<Bug::none>(P, dp, dvec, fac);
}

template <class Atom, class E, int D, int T>
__global__ __launch_bounds__(amd_bwd_threads<Atom>()) void amd_bwd_dkdv(BwdParams bp) {
  using C = AmdBwdConfig<Atom, D, T>;
  constexpr int M = C::M, N = C::N, K = C::K, kLd = C::kLd, kSLd = C::kSLd;
  __shared__ __align__(16) std::uint16_t k_s[C::kBc * kLd], v_s[C::kBc * kLd];
  __shared__ __align__(16) std::uint16_t q_s[T * kLd], do_s[T * kLd];
  __shared__ __align__(16) std::uint16_t pt_s[C::kBc * kSLd], dst_s[C::kBc * kSLd];  // [key][query]
  __shared__ float lse_s[T], dvec_s[T];
  const Params& p = bp.f;
  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave, wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int kb = static_cast<int>(blockIdx.x) * C::kBc, kvh = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int keys = keys_of(p, b), diag = static_cast<int>(diag_of<Bug::none>(p, b));
  int lo_off, hi_off;
  visible_offsets32(p, b, lo_off, hi_off);
  // The query tiles with a row that sees a key of this block.
  int t_first, ntiles;
  mask::query_tiles_seeing(kb, C::kBc, keys, p.sq, lo_off, hi_off, T, t_first, ntiles);
  const int wk = wave * M;  // the wave's first key in the block
  float dk[C::kDT][Atom::kC], dv[C::kDT][Atom::kC];
#pragma unroll
  for (int t = 0; t < C::kDT; ++t)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) dk[t][q] = dv[t][q] = 0.f;
  if (ntiles > 0) {
    amd_bwd_fill<C::kBc, D, C::kThreads>(k_s, kLd, p.k, p.ks, b, kvh, kb, keys);
    amd_bwd_fill<C::kBc, D, C::kThreads>(v_s, kLd, p.v, p.vs, b, kvh, kb, keys);
  }
  for (int step = 0; step < ntiles * p.group; ++step) {
    const int h = mask::q_head(kvh, step / ntiles, p.group), i0 = (t_first + step % ntiles) * T;
    fp_dev::barrier();  // every wave is done with the previous step's tiles
    amd_bwd_fill<T, D, C::kThreads>(q_s, kLd, p.q, p.qs, b, h, i0, p.sq);
    amd_bwd_fill<T, D, C::kThreads>(do_s, kLd, bp.dout, p.os, b, h, i0, p.sq);
    amd_bwd_row_terms<T, C::kThreads>(lse_s, dvec_s, bp, b, h, i0);
    fp_dev::barrier();
    // S^T = K Q^T and dP^T = V dO^T: the wave's M keys x T queries (B[k = dim][n = query] n-major).
    float s[C::kST][Atom::kC], dp[C::kST][Atom::kC];
    amd_bwd_two_products<Atom, C>(s, dp, k_s, v_s, wk, q_s, do_s, lane);
    // P^T and dS^T (row = key, column = query), rounded to the input type, into the wave's rows of
    // the staging tiles.
#pragma unroll
    for (int nt = 0; nt < C::kST; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const atoms::Coord c = Atom::c(lane, q);
        const int il = nt * N + c.col;
        amd_bwd_pds(p, s[nt][q], dp[nt][q], lse_s[il], dvec_s[il], h, i0 + il, kb + wk + c.row, diag, keys, lo_off, hi_off);
        pt_s[(wk + c.row) * kSLd + il] = to_bits<E>(s[nt][q]);
        dst_s[(wk + c.row) * kSLd + il] = to_bits<E>(dp[nt][q]);
      }
    fp_dev::barrier();
    // dV += P^T dO, dK += dS^T Q (k = queries; B[k = query][n = dim] k-major).
#pragma unroll 1
    for (int pt = 0; pt < C::kPT; ++pt) {
      std::uint32_t pa[Atom::kA / 2], dsa[Atom::kA / 2];
      load_a_rowmajor<Atom>(pa, pt_s, kSLd, wk, pt * K, lane);
      load_a_rowmajor<Atom>(dsa, dst_s, kSLd, wk, pt * K, lane);
#pragma unroll
      for (int ot = 0; ot < C::kDT; ++ot) {
        std::uint32_t bf[Atom::kB / 2];
        load_b_kmajor<Atom>(bf, do_s, kLd, pt * K, ot * N, lane);
        Atom::mma(dv[ot], pa, bf);
        load_b_kmajor<Atom>(bf, q_s, kLd, pt * K, ot * N, lane);
        Atom::mma(dk[ot], dsa, bf);
      }
    }
  }
  // dK = scale * dS^T Q and dV in the input type at K's and V's strides; keys past keys(b) are 0.
#pragma unroll
  for (int t = 0; t < C::kDT; ++t)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) {
      const atoms::Coord c = Atom::c(lane, q);
      const int j = kb + wk + c.row, x = t * N + c.col;
      if (j < p.sk) {
        store(bp.dk, offset4(p.ks, b, j, kvh, x), p.dtype, dk[t][q] * p.scale);
        store(bp.dv, offset4(p.vs, b, j, kvh, x), p.dtype, dv[t][q]);
      }
    }
}

template <class Atom, class E, int D, int T>
__global__ __launch_bounds__(amd_bwd_threads<Atom>()) void amd_bwd_dq(BwdParams bp) {
  using C = AmdBwdConfig<Atom, D, T>;
  constexpr int M = C::M, N = C::N, K = C::K, kLd = C::kLd, kSLd = C::kSLd;
  __shared__ __align__(16) std::uint16_t q_s[C::kBc * kLd], do_s[C::kBc * kLd];
  __shared__ __align__(16) std::uint16_t k_s[T * kLd], v_s[T * kLd];
  __shared__ __align__(16) std::uint16_t ds_s[C::kBc * kSLd];  // [query][key]
  __shared__ float lse_s[C::kBc], dvec_s[C::kBc];
  const Params& p = bp.f;
  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave, wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int i0 = static_cast<int>(blockIdx.x) * C::kBc, h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int kvh = kv_head<Bug::none>(p, h), keys = keys_of(p, b), diag = static_cast<int>(diag_of<Bug::none>(p, b));
  const int wr = wave * M;  // the wave's first row in the block
  int lo_off, hi_off;
  visible_offsets32(p, b, lo_off, hi_off);
  int blo, bhi;  // the block's keys (blo > bhi: none)
  block_keys_from_offsets32(i0, C::kBc, p.sq, keys, lo_off, hi_off, blo, bhi);
  float dq[C::kDT][Atom::kC];
#pragma unroll
  for (int u = 0; u < C::kDT; ++u)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) dq[u][q] = 0.f;
  if (blo <= bhi) {
    amd_bwd_fill<C::kBc, D, C::kThreads>(q_s, kLd, p.q, p.qs, b, h, i0, p.sq);
    amd_bwd_fill<C::kBc, D, C::kThreads>(do_s, kLd, bp.dout, p.os, b, h, i0, p.sq);
    amd_bwd_row_terms<C::kBc, C::kThreads>(lse_s, dvec_s, bp, b, h, i0);
  }
  for (int kv0 = blo <= bhi ? (blo / T) * T : 0; blo <= bhi && kv0 <= bhi; kv0 += T) {
    fp_dev::barrier();  // every wave is done with the previous key tile
    amd_bwd_fill<T, D, C::kThreads>(k_s, kLd, p.k, p.ks, b, kvh, kv0, keys);
    amd_bwd_fill<T, D, C::kThreads>(v_s, kLd, p.v, p.vs, b, kvh, kv0, keys);
    fp_dev::barrier();
    // S = Q K^T, dP = dO V^T: the wave's M rows x T keys (B[k = dim][n = key] n-major).
    float s[C::kST][Atom::kC], dp[C::kST][Atom::kC];
    amd_bwd_two_products<Atom, C>(s, dp, q_s, do_s, wr, k_s, v_s, lane);
    // dS (row = query, column = key), rounded to the input type, into the wave's rows of ds_s.
#pragma unroll
    for (int nt = 0; nt < C::kST; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const atoms::Coord c = Atom::c(lane, q);
        const int rl = wr + c.row, jl = nt * N + c.col;
        amd_bwd_pds(p, s[nt][q], dp[nt][q], lse_s[rl], dvec_s[rl], h, i0 + rl, kv0 + jl, diag, keys, lo_off, hi_off);
        ds_s[rl * kSLd + jl] = to_bits<E>(dp[nt][q]);
      }
    fp_dev::barrier();
    // dQ += dS K (k = keys; B[k = key][n = dim] k-major).
#pragma unroll 1
    for (int pt = 0; pt < C::kPT; ++pt) {
      std::uint32_t a[Atom::kA / 2];
      load_a_rowmajor<Atom>(a, ds_s, kSLd, wr, pt * K, lane);
#pragma unroll
      for (int ot = 0; ot < C::kDT; ++ot) {
        std::uint32_t bf[Atom::kB / 2];
        load_b_kmajor<Atom>(bf, k_s, kLd, pt * K, ot * N, lane);
        Atom::mma(dq[ot], a, bf);
      }
    }
  }
#pragma unroll
  for (int u = 0; u < C::kDT; ++u)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) {
      const atoms::Coord c = Atom::c(lane, q);
      const int i = i0 + wr + c.row;
      if (i < p.sq) store(bp.dq, offset4(p.qs, b, i, h, u * N + c.col), p.dtype, dq[u][q] * p.scale);
    }
}

}  // namespace flashprobe::kernels::dev
