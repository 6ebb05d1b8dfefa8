#pragma once
// mma_bwd and mma_bwd_det (flashprobe/kernels/backward.h): FlashAttention-2's backward on the matrix
// unit, written over an atom (flashprobe/atoms/*.cuh) the way the forward mma kernel is: fragments
// are placed only through Atom::a/b/c and the derivations of layouts.h and sm75_ldmatrix.h.
//
//   1. mma_bwd_rowdot: D_i = rowsum(dO ∘ O) in fp32, one wave per row (any strides, O's out_dtype).
//   2. mma_bwd_dkdv: one block per (key block of kBc keys, kv head, batch), each wave owning Atom::M
//      keys (rows of the transposed products). For every query head of the group and every query
//      tile of kBr rows that sees a key of the block (the tiles outside the mask's hull are skipped):
//        S^T = K Q^T, dP^T = V dO^T           (A = K or V rows from shared memory, B = Q or dO, n-major)
//        P^T = exp(S^T - LSE), dS^T = P^T (dP^T - D) (times 1 - tanh² with soft-cap), both rounded to
//            the input type and converted in registers into A fragments (derive_c_to_a, as the
//            forward's P)
//        dV += P^T dO, dK += dS^T Q           (B = dO or Q, k-major: ldmatrix .trans)
//      Q, dO, LSE and D of the next tile are copied (cp.async) while this one is computed.
//      Fast mode: dS is also written to shared memory as [query][key] and every wave multiplies its
//      share of dS K (A = dS, B = K k-major) and adds it to the fp32 workspace with atomics (kBulkDq:
//      stages it in shared memory in fp32 and adds each row with one cp.reduce.async.bulk, sm_90).
//   3. fast: bwd_dq_convert (bwd.cuh) writes dQ = scale * workspace in the input type.
//      deterministic: mma_bwd_dq, one block per (query tile, head, batch) as the forward, recomputes
//      S, dP, P and dS per key tile and accumulates dQ += dS K in registers over the key tiles in
//      order: a fixed reduction order, no atomics.
// The NVIDIA path only (mma.sync m16n8k16: ldmatrix feeds every operand, the C fragment is an A
// fragment in place); other atoms are refused at compile time (the registry refuses their devices).
// Rows and keys are 32-bit (visible_range32's premise; the launcher bounds sq + sk).
#include <climits>
#include <cstdint>

#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/atoms/caps.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/core/mask.h"
#include "flashprobe/core/mask_hull.h"
#include "src/attn_common.cuh"
#include "src/bwd.cuh"
#include "src/bwd_params.h"
#include "src/dtype.cuh"
#include "src/fast_math.cuh"
#include "src/mma/async_copy.cuh"
#include "src/mma/ldsm_imm.cuh"
#include "src/mma/mma_attn.cuh"
#include "src/mma/mma_bwd_lanes.h"

namespace flashprobe::kernels::dev {

// Whether an atom can run this backward: ldmatrix feeds A (row-major), B n-major and B k-major, and a
// C fragment converts into an A fragment in place.
template <class Atom>
constexpr bool mma_bwd_atom_ok() {
  return use_ldsm<Atom>() && atoms::derive_c_to_a<Atom>().in_place && Atom::K == 2 * Atom::N;
}

template <class Atom, int D, int Waves, int Br, int DsStages, int DqStages = 0>
struct MmaBwdConfig {
  static constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  static constexpr int kWaves = Waves, kThreads = Waves * Atom::kWave;
  static constexpr int kBc = Waves * M;  // keys per block of mma_bwd_dkdv (M per wave)
  static constexpr int kBr = Br;         // query rows per step of mma_bwd_dkdv
  static constexpr int kLd = D + 8;      // padded rows (16 bytes): ldmatrix rows land on distinct banks
  static constexpr int kDsLd = kBc + 8;  // dS tile [query][key]
  static constexpr int kKT = D / K;      // k-steps over the head dim (S^T, dP^T)
  static constexpr int kST = Br / N;     // n-tiles of S^T and dP^T (queries)
  static constexpr int kQK = Br / K;     // k-steps over the queries (dV, dK)
  static constexpr int kDT = D / N;      // n-tiles of dK, dV
  static constexpr int kCK = kBc / K;    // k-steps over the keys (dQ)
  static constexpr int kDqCols = 4 * N;  // dQ columns per wave pass (4 accumulator tiles)
  static constexpr int kDqUnits = (Br / M) * (D / kDqCols);
  static constexpr int kKvTile = kBc * kLd, kQTile = Br * kLd, kDsTile = Br * kDsLd;
  // The fp32 dQ staging tile of the bulk reduction: Br rows of D floats, kDqLd apart (the bulk copy
  // reads each row as D contiguous floats; the 8-float pad puts a wave's float2 stores of one C slot
  // on distinct banks).
  static constexpr int kDqLd = D + 8, kDqTile = Br * kDqLd;
  // Dynamic shared memory: K, V | 2 stages of (Q, dO) | DsStages dS tiles (two when a step's dQ is
  // computed after the next step's barrier) | 2 stages of (LSE * log2e, D), floats | DqStages fp32
  // dQ staging tiles (the bulk reduction), 16-byte aligned.
  static constexpr int kHalfElems = 2 * kKvTile + 4 * kQTile + DsStages * kDsTile;
  static constexpr int kDqOffset = kHalfElems * 2 + 4 * Br * 4;  // bytes
  static constexpr int kSmemBytes = kDqOffset + DqStages * kDqTile * 4;
  static_assert(D % kDqCols == 0 && Br % K == 0 && Br % M == 0 && kST % 2 == 0 && kDT % 2 == 0, "tile shapes");
  static_assert((kHalfElems * 2) % 16 == 0 && kDqOffset % 16 == 0 && (kDqLd * 4) % 16 == 0 && (D * 4) % 16 == 0,
                "the float arrays and the staging rows are 16-byte aligned");
};

// dS tiles in shared memory: none without atomics when dQ is deferred (the deterministic mode's
// dK/dV kernel needs none), two when deferred with atomics, else one (the 64-key shape as measured).
constexpr int mma_bwd_ds_stages(bool atomic_dq, bool defer_dq) { return defer_dq ? (atomic_dq ? 2 : 0) : 1; }
// fp32 dQ staging tiles: two with the bulk reduction (a step's tile is read by the copy while the
// next step's is written), none otherwise.
constexpr int mma_bwd_dq_stages(bool bulk_dq) { return bulk_dq ? 2 : 0; }

// The deterministic dQ kernel: one block per kBm query rows (M per wave), key tiles of kBn keys.
template <class Atom, int D, int Waves, int Bn>
struct MmaBwdDqConfig {
  static constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  static constexpr int kThreads = Waves * Atom::kWave;
  static constexpr int kBm = Waves * M, kBn = Bn;
  static constexpr int kLd = D + 8;
  static constexpr int kKT = D / K, kNT = Bn / N, kPT = Bn / K, kOT = D / N;
  static constexpr int kQTile = kBm * kLd, kKvTile = Bn * kLd;
  // Q, dO | 2 stages of (K, V)
  static constexpr int kSmemBytes = (2 * kQTile + 4 * kKvTile) * 2;
  static_assert(kNT % 2 == 0 && kOT % 2 == 0, "ldmatrix.x4 reads two n-tiles at a time");
};

// Whether C slots 2r and 2r + 1 of every lane are neighbouring columns of one row, the first even:
// the pair is one 8-byte aligned float2 of a row-major fp32 tile with an even row length.
template <class Atom>
constexpr bool c_pairs_adjacent() {
  if (Atom::kC % 2 != 0 || Atom::N % 2 != 0) return false;
  for (int l = 0; l < Atom::kWave; ++l)
    for (int r = 0; r < Atom::kC / 2; ++r) {
      const atoms::Coord a = Atom::c(l, 2 * r), n = Atom::c(l, 2 * r + 1);
      if (a.row != n.row || n.col != a.col + 1 || a.col % 2 != 0) return false;
    }
  return true;
}

// dst[0] += a and dst[1] += b in global memory (fp32, dst 8-byte aligned): one vector reduction on
// sm_90 and later (red.global.add.v2.f32), two scalar atomics before.
FP_DEV void red_add_f32x2(float* dst, float a, float b) {
#if defined(FP_CAP_SM90)
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(__cvta_generic_to_global(dst)), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(dst, a);
  atomicAdd(dst + 1, b);
#endif
}

// The bulk dQ reduction (sm_90 and later): dst[0 .. bytes / 4) += src[...] in fp32, one
// cp.reduce.async.bulk from shared memory performed by the copy engine (dst and src 16-byte aligned,
// bytes a multiple of 16), in this thread's bulk group. Before sm_90 the same sums as scalar atomics
// (the registry refuses those devices: this path is compiled, never run).
FP_DEV void bulk_reduce_add_f32(float* dst, const float* src, int bytes) {
#if defined(FP_CAP_SM90)
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(
                   __cvta_generic_to_global(dst)),
               "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(bytes)
               : "memory");
#else
  for (int x = 0; x < bytes / 4; ++x) atomicAdd(dst + x, src[x]);
#endif
}
FP_DEV void bulk_commit() {
#if defined(FP_CAP_SM90)
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
// Waits until this thread's bulk copies have read their shared memory (the source may be rewritten).
FP_DEV void bulk_wait_read() {
#if defined(FP_CAP_SM90)
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#endif
}
// Waits until this thread's bulk copies are complete (their global writes performed).
FP_DEV void bulk_wait_all() {
#if defined(FP_CAP_SM90)
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}
// Orders this thread's shared-memory stores before later bulk copies (the async proxy) read them.
FP_DEV void bulk_fence_proxy_async() {
#if defined(FP_CAP_SM90)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// Two products that share their shape, computed together (S and dP, or S^T and dP^T): acc0 = A0 B0^T
// and acc1 = A1 B1^T over kKT k-steps and kNT n-tiles, A0 and A1 the wave's Atom::M rows of row-major
// tiles (ldmatrix lane addresses a0, a1), B0 and B1 n-major tiles (lane addresses b0, b1), rows kLd
// elements apart. Each B fragment pair (one ldmatrix.x4) feeds two mma.
template <class Atom, int kKT, int kNT, int kLd>
FP_DEV void mma_two_nmajor(float (&acc0)[kNT][Atom::kC], float (&acc1)[kNT][Atom::kC], std::uint32_t a0, std::uint32_t a1,
                           std::uint32_t b0, std::uint32_t b1) {
#pragma unroll
  for (int t = 0; t < kNT; ++t)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) acc0[t][q] = acc1[t][q] = 0.f;
  static_for<kKT>([&](auto kk_) {
    constexpr int kk = decltype(kk_)::value;
    std::uint32_t x0[4], x1[4];
    ldsm_x4<false, 2 * kk * Atom::K>(a0, x0);
    ldsm_x4<false, 2 * kk * Atom::K>(a1, x1);
    static_for<kNT / 2>([&](auto np_) {
      constexpr int nt = 2 * decltype(np_)::value;
      std::uint32_t r[4];
      ldsm_x4<false, 2 * (nt * Atom::N * kLd + kk * Atom::K)>(b0, r);
      const std::uint32_t p0[2] = {r[0], r[1]}, p1[2] = {r[2], r[3]};
      Atom::mma(acc0[nt], x0, p0);
      Atom::mma(acc0[nt + 1], x0, p1);
      ldsm_x4<false, 2 * (nt * Atom::N * kLd + kk * Atom::K)>(b1, r);
      const std::uint32_t q0[2] = {r[0], r[1]}, q1[2] = {r[2], r[3]};
      Atom::mma(acc1[nt], x1, q0);
      Atom::mma(acc1[nt + 1], x1, q1);
    });
  });
}

// The mask offsets of the backward (visible_offsets32); the bwd_mma_causal_missing mutant drops the
// causal bound here, in the backward only.
template <Bug bug>
FP_DEV void bwd_offsets32(const Params& p, int b, int& lo_off, int& hi_off) {
  if constexpr (bug == Bug::bwd_mma_causal_missing) {
    Params q = p;
    q.causal = CausalMode::none;
    visible_offsets32(q, b, lo_off, hi_off);
  } else {
    visible_offsets32(p, b, lo_off, hi_off);
  }
}

// D_i = rowsum(dO ∘ O): one wave per row (b, h, i), lanes over the dims, a fixed shuffle tree.
template <Bug bug>
__global__ __launch_bounds__(128) void mma_bwd_rowdot(BwdParams bp) {
  const Params& f = bp.f;
  const std::int64_t r = std::int64_t{blockIdx.x} * (blockDim.x / fp_dev::kWaveSize) + threadIdx.x / fp_dev::kWaveSize;
  const int lane = static_cast<int>(threadIdx.x) % fp_dev::kWaveSize;
  if (r >= std::int64_t{f.batch} * f.hq * f.sq) return;
  const int i = static_cast<int>(r % f.sq), h = static_cast<int>((r / f.sq) % f.hq),
            b = static_cast<int>(r / (std::int64_t{f.sq} * f.hq));
  float s = 0.f;
  for (int x = lane; x < f.dv; x += fp_dev::kWaveSize) {
    const std::int64_t o = offset4(f.os, b, i, h, x);
    s += load_rt(bp.dout, o, f.out_dtype) * load_rt(f.o, o, f.out_dtype);
  }
  for (int bit = fp_dev::kWaveSize / 2; bit > 0; bit >>= 1) s += fp_dev::shfl_xor(s, bit);
  if (lane == 0) bp.dvec[r] = s;
}

// bwd_dq_convert for a head dim D and a 16-bit type E known at compile time (mma_bwd_fa2's): one
// thread per 8 consecutive columns of one workspace row (i, h) of batch blockIdx.y, the row from one
// 32-bit division by hq per 8 elements (the host checks sq * hq * D / 8 < 2^31), two 16-byte loads of
// the workspace (16-byte aligned: checked on the host), and one 16-byte store where the 8 elements of
// dQ are contiguous and 16-byte aligned (element by element otherwise). Each value is rounded by
// to_bits<E>, the rounding of bwd_dq_convert's store: the same dQ.
template <class E, int D, Bug bug>
__global__ __launch_bounds__(kBwdThreads) void mma_bwd_dq_convert(BwdParams bp) {
  static_assert(D % 8 == 0 && E::kType != DType::f32, "16-bit dQ in chunks of 8 columns");
  constexpr int kChunks = D / 8;
  const Params& p = bp.f;
  const int rows = p.sq * p.hq;  // per batch
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= rows * kChunks) return;
  const int b = static_cast<int>(blockIdx.y), r = t / kChunks, x = (t % kChunks) * 8;
  const int i = r / p.hq, h = r - i * p.hq;
  const float4* src = reinterpret_cast<const float4*>(bp.dq_acc + (std::int64_t{b} * rows + r) * D + x);
  const float4 lo = src[0], hi = src[1];
  const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  std::uint16_t* dst = static_cast<std::uint16_t*>(bp.dq) + offset4(p.qs, b, i, h, x);
  if (p.qs.d == 1 && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
    std::uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e)
      w[e] = static_cast<std::uint32_t>(to_bits<E>(v[2 * e] * p.scale)) |
             (static_cast<std::uint32_t>(to_bits<E>(v[2 * e + 1] * p.scale)) << 16);
    *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) dst[e * p.qs.d] = to_bits<E>(v[e] * p.scale);
  }
}

// A row-major tile of Rows rows of D 16-bit elements (row stride ld) from rows r0 .. r0 + Rows - 1 of
// a [B, S, H, D] tensor (rows at or past `rows` are zero): cp.async 16-byte chunks when vec, else
// element by element.
template <int Rows, int D, int Threads>
FP_DEV void bwd_fill_tile(std::uint16_t* t, int ld, const void* g, const DevStrides& st, int b, int h, int r0, int rows,
                          bool vec) {
  const auto* gp = static_cast<const std::uint16_t*>(g);
  const int tid = static_cast<int>(threadIdx.x);
  if (vec) {
    constexpr int kChunks = D / 8;
    const std::int64_t base = b * st.b + h * st.h;
#pragma unroll
    for (int c = tid; c < Rows * kChunks; c += Threads) {
      const int rr = c / kChunks, x8 = (c % kChunks) * 8;
      const int r = r0 + rr;
      const bool in = r < rows;
      cp_async16(&t[rr * ld + x8], gp + base + static_cast<std::int64_t>(in ? r : 0) * st.s + x8, in);
    }
  } else {
    for (int e = tid; e < Rows * D; e += Threads) {
      const int rr = e / D, x = e % D, r = r0 + rr;
      t[rr * ld + x] = r < rows ? gp[offset4(st, b, r, h, x)] : std::uint16_t{0};
    }
  }
}

// bwd_fill_tile's vector path with the address work hoisted (mma_bwd_fa2's copies): g is the tile's
// (batch, head) base in elements (uniform, computed once per step by the caller), rs its row stride. Each
// thread copies the same 16-byte column chunk of every Threads / (D / 8)-th row, so its source advances by
// a constant stride and its destination by an immediate offset; rows past `rows` are zero-filled. The
// same copies as bwd_fill_tile's vector path.
template <int Rows, int D, int Threads>
FP_DEV void bwd_fill_tile_lean(std::uint16_t* t, int ld, const std::uint16_t* g, std::int64_t rs, int r0, int rows) {
  constexpr int kChunks = D / 8, kRowsPer = Threads / kChunks;
  static_assert(Threads % kChunks == 0 && Rows % kRowsPer == 0, "every thread copies one column chunk of whole rows");
  const int tid = static_cast<int>(threadIdx.x);
  const int rr0 = tid / kChunks, x8 = (tid % kChunks) * 8;
  const std::uint16_t* src = g + (r0 + rr0) * rs + x8;
  const std::int64_t step = kRowsPer * rs;
  std::uint16_t* dst = t + rr0 * ld + x8;
#pragma unroll
  for (int j = 0; j < Rows / kRowsPer; ++j) {
    const bool in = r0 + rr0 + j * kRowsPer < rows;
    cp_async16(dst + j * kRowsPer * ld, in ? src + j * step : g, in);  // a mapped address when !in
  }
}

// The score transform of one element in the log2 domain (natural units times log2e when Extras, raw
// dot times scale * log2e otherwise) and its soft-cap factor d(score)/d(scaled dot).
template <bool Extras, Bug bug>
FP_DEV float bwd_score2(const Params& p, float dot, float scale_log2, int h, int i_diag, int j, float& fac) {
  fac = 1.f;
  if constexpr (!Extras) {
    return dot * scale_log2;
  } else {
    float s = dot * p.scale;
    if (p.softcap > 0.f) {
      const float th = tanhf(s / p.softcap);
      s = p.softcap * th;
      if constexpr (bug != Bug::bwd_mma_softcap_grad_missing) fac = 1.f - th * th;
    }
    if (p.alibi) s -= p.alibi[h] * static_cast<float>(i_diag >= j ? i_diag - j : j - i_diag);
    return s * kLog2e;
  }
}

// dS from P, dP and the row term D (the bwd_mma_no_rowsum_d mutant drops D).
template <Bug bug>
FP_DEV float bwd_ds(float P, float dp, float dvec, float fac) {
  if constexpr (bug == Bug::bwd_mma_no_rowsum_d) return P * dp * fac;
  else return P * (dp - dvec) * fac;
}

// kDeferDq (fast mode): a step's dQ is computed after the next step's first barrier from a second dS
// buffer (one barrier per step instead of two); else right after the step's dK/dV behind its own
// barrier. kPairedDq: two neighbouring dQ columns per atomic instruction.
// Sub: the query rows whose S^T and dP^T are live at once (Br, or a divisor of it to spare registers).
template <class Atom, class E, int D, int Waves, int Br, int Sub, Bug bug, bool kAtomicDq, bool kPairedDq, bool kDeferDq,
          bool Extras, bool kBulkDq = false>
__global__ __launch_bounds__(Waves * Atom::kWave) void mma_bwd_dkdv(BwdParams bp) {
  static_assert(mma_bwd_atom_ok<Atom>(), "mma_bwd needs ldmatrix-fed operands and C fragments usable as A");
  static_assert(!kPairedDq || c_pairs_adjacent<Atom>(), "paired dQ atomics need C slot pairs on neighbouring columns");
  static_assert(!kBulkDq || (kAtomicDq && kDeferDq && c_pairs_adjacent<Atom>() && Br <= Waves * Atom::kWave),
                "the bulk dQ reduction is a deferred fast-mode path (float2 staging stores, one issuing thread per row)");
  using C = MmaBwdConfig<Atom, D, Waves, Br, mma_bwd_ds_stages(kAtomicDq, kDeferDq), mma_bwd_dq_stages(kBulkDq)>;
  constexpr atoms::CToA<Atom> kC2A = atoms::derive_c_to_a<Atom>();
  constexpr int M = C::M, N = C::N, K = C::K, kLd = C::kLd;
  static_assert(Br % Sub == 0 && Sub % K == 0 && (Sub / N) % 2 == 0, "query sub-tiles");
  constexpr int kSTs = Sub / N, kQKs = Sub / K;  // n-tiles of S^T and k-steps of dV, dK per sub-tile
  const Params& p = bp.f;
  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave, wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int tid = static_cast<int>(threadIdx.x);
  const int kb = static_cast<int>(blockIdx.x) * C::kBc, kvh = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int keys = keys_of(p, b);
  int lo_off, hi_off;
  bwd_offsets32<bug>(p, b, lo_off, hi_off);
  const int diag = static_cast<int>(diag_of<Bug::none>(p, b));

  // The query tiles with a row that sees a key of this block.
  int t_first, ntiles;
  mask::query_tiles_seeing(kb, C::kBc, keys, p.sq, lo_off, hi_off, Br, t_first, ntiles);
  const int steps = ntiles * p.group;

  std::uint16_t* const k_s = fp_dev::dynamic_smem<std::uint16_t>();
  std::uint16_t* const v_s = k_s + C::kKvTile;
  std::uint16_t* const qd_s = v_s + C::kKvTile;  // stage s: Q at qd_s + 2s * kQTile, dO after it
  std::uint16_t* const ds_s = qd_s + 4 * C::kQTile;  // kDeferDq, stage s: dS at ds_s + s * kDsTile
  float* const lse_s = reinterpret_cast<float*>(k_s + C::kHalfElems);  // [2][Br], LSE * log2e
  float* const dvec_s = lse_s + 2 * Br;                                // [2][Br]
  float* const dqs_s = reinterpret_cast<float*>(reinterpret_cast<char*>(k_s) + C::kDqOffset);  // kBulkDq: [2][Br][kDqLd]

  const bool qvec = p.q_rows16 != 0, dovec = bp.dout_rows16 != 0, kvvec = p.kv_rows16 != 0;
  const auto fill_step = [&](int stage, int step) {
    const int h = mask::q_head(kvh, step / ntiles, p.group), i0 = (t_first + step % ntiles) * Br;
    std::uint16_t* q = qd_s + 2 * stage * C::kQTile;
    bwd_fill_tile<Br, D, C::kThreads>(q, kLd, p.q, p.qs, b, h, i0, p.sq, qvec);
    bwd_fill_tile<Br, D, C::kThreads>(q + C::kQTile, kLd, bp.dout, p.os, b, h, i0, p.sq, dovec);
    for (int r = tid; r < Br; r += C::kThreads) {
      const int i = i0 + r;
      const std::int64_t row = (std::int64_t{b} * p.hq + h) * p.sq + i;
      lse_s[stage * Br + r] = i < p.sq ? p.lse[row] * kLog2e : 0.f;
      dvec_s[stage * Br + r] = i < p.sq ? bp.dvec[row] : 0.f;
    }
    cp_async_commit();
  };

  float dk[C::kDT][Atom::kC], dv[C::kDT][Atom::kC];
  const auto clear = [&] {
#pragma unroll
    for (int t = 0; t < C::kDT; ++t)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) dk[t][q] = dv[t][q] = 0.f;
  };
  clear();

  if (steps > 0) {
    bwd_fill_tile<C::kBc, D, C::kThreads>(k_s, kLd, p.k, p.ks, b, kvh, kb, keys, kvvec);
    bwd_fill_tile<C::kBc, D, C::kThreads>(v_s, kLd, p.v, p.vs, b, kvh, kb, keys, kvvec);
    fill_step(0, 0);
  }
  const float scale_log2 = p.scale * kLog2e;
  // ldmatrix lane addresses: the wave's M rows of K and V (A operands), and the per-lane offsets of
  // B fragments read n-major (Q, dO for S^T, dP^T) and k-major (dO, Q for dV, dK; K for dQ).
  const std::uint32_t k_a = smem_u32(k_s) + 2 * ((wave * M + LdsmLanes::a_row(lane)) * kLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t v_a = smem_u32(v_s) + 2 * ((wave * M + LdsmLanes::a_row(lane)) * kLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t bn_off = 2 * (LdsmLanes::bn_row(lane) * kLd + 8 * LdsmLanes::bn_chunk(lane));
  const std::uint32_t bk_off = 2 * (LdsmLanes::bk_row(lane) * kLd + 8 * LdsmLanes::bk_chunk(lane));

  // Fast mode: dQ_tile += dS K of step st (its dS tile ds_t), after a barrier that follows every
  // wave's dS writes: units of (m-tile of M queries, kDqCols columns) shared among the waves, added
  // to the fp32 workspace with atomics (two neighbouring columns per instruction if kPairedDq).
  const auto dq_step = [&](int st) {
    const int h = mask::q_head(kvh, st / ntiles, p.group), i0 = (t_first + st % ntiles) * Br;
    const std::uint16_t* ds_t = ds_s + (kDeferDq ? (st & 1) * C::kDsTile : 0);
    for (int u = wave; u < C::kDqUnits; u += Waves) {
      const int mt = u / (D / C::kDqCols), c0 = (u % (D / C::kDqCols)) * C::kDqCols;
      float acc[4][Atom::kC];
#pragma unroll
      for (int t = 0; t < 4; ++t)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) acc[t][q] = 0.f;
      const std::uint32_t ds_a =
          smem_u32(ds_t) + 2 * ((mt * M + LdsmLanes::a_row(lane)) * C::kDsLd + 8 * LdsmLanes::a_chunk(lane));
      const std::uint32_t kk_b = smem_u32(k_s) + bk_off + 2 * c0;
      static_for<C::kCK>([&](auto ks_) {
        constexpr int ks = decltype(ks_)::value;
        std::uint32_t a[4];
        ldsm_x4<false, 2 * ks * K>(ds_a, a);
        static_for<2>([&](auto np_) {
          constexpr int nt = 2 * decltype(np_)::value;
          std::uint32_t r[4];
          ldsm_x4<true, 2 * (ks * K * kLd + nt * N)>(kk_b, r);
          const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
          Atom::mma(acc[nt], a, b0);
          Atom::mma(acc[nt + 1], a, b1);
        });
      });
      if constexpr (kBulkDq) {
        // Into staging tile st & 1 (issued by bulk_dq(st) after the next barrier), float2 per C pair.
        float* const tile = dqs_s + (st & 1) * C::kDqTile;
#pragma unroll
        for (int t = 0; t < 4; ++t)
#pragma unroll
          for (int r = 0; r < Atom::kC / 2; ++r) {
            const atoms::Coord c = Atom::c(lane, 2 * r);
            *reinterpret_cast<float2*>(&tile[(mt * M + c.row) * C::kDqLd + c0 + t * N + c.col]) =
                make_float2(acc[t][2 * r], acc[t][2 * r + 1]);
          }
      } else if constexpr (kPairedDq) {
#pragma unroll
        for (int t = 0; t < 4; ++t)
#pragma unroll
          for (int r = 0; r < Atom::kC / 2; ++r) {
            const atoms::Coord c = Atom::c(lane, 2 * r);
            const int i = i0 + mt * M + c.row;
            if (i < p.sq)
              red_add_f32x2(&bp.dq_acc[((std::int64_t{b} * p.sq + i) * p.hq + h) * D + c0 + t * N + c.col], acc[t][2 * r],
                            acc[t][2 * r + 1]);
          }
      } else {
#pragma unroll
        for (int t = 0; t < 4; ++t)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) {
            const atoms::Coord c = Atom::c(lane, q);
            const int i = i0 + mt * M + c.row;
            if (i < p.sq)
              atomicAdd(&bp.dq_acc[((std::int64_t{b} * p.sq + i) * p.hq + h) * D + c0 + t * N + c.col], acc[t][q]);
          }
      }
    }
    if constexpr (kBulkDq) bulk_fence_proxy_async();  // the staging stores, before the bulk copy reads them
  };
  // kBulkDq: after a barrier that follows dq_step(st), thread r < Br adds staged row r of step st to
  // the workspace with one bulk reduction (D floats); it waits for the copy's reads before the next
  // barrier (dq_step(st + 2) rewrites the tile).
  const auto bulk_dq = [&](int st) {
    const int h = mask::q_head(kvh, st / ntiles, p.group), i = (t_first + st % ntiles) * Br + tid;
    if (tid < Br && i < p.sq) {
      bulk_reduce_add_f32(&bp.dq_acc[((std::int64_t{b} * p.sq + i) * p.hq + h) * D], dqs_s + (st & 1) * C::kDqTile + tid * C::kDqLd,
                          D * 4);
      bulk_commit();
    }
  };

  for (int step = 0; step < steps; ++step) {
    const int stage = step & 1;
    const int hh = step / ntiles, h = mask::q_head(kvh, hh, p.group), i0 = (t_first + step % ntiles) * Br;
    if constexpr (bug == Bug::bwd_mma_gqa_unsummed) {
      if (step % ntiles == 0) clear();
    }
    cp_async_wait<0>();
    fp_dev::barrier();  // this step's tiles are in; every wave is done with the previous step's tiles
                        // (kDeferDq: and has written the previous step's dS)
    if (step + 1 < steps) fill_step(stage ^ 1, step + 1);
    if constexpr (kBulkDq) {
      if (step > 1) bulk_dq(step - 2);
    }
    if constexpr (kAtomicDq && kDeferDq) {
      if (step > 0) dq_step(step - 1);
    }
    const std::uint16_t* q_s = qd_s + 2 * stage * C::kQTile;
    const std::uint16_t* do_s = q_s + C::kQTile;
    const float* lse_t = lse_s + stage * Br;
    const float* dvec_t = dvec_s + stage * Br;
    const std::uint32_t do_k = smem_u32(do_s) + bk_off, q_k = smem_u32(q_s) + bk_off;
    const int jb = kb + wave * M;

    // The tile's queries in sub-tiles of Sub rows from row r0 (S^T and dP^T of one sub-tile live at
    // a time; a loop that is not unrolled, so that the sub-tiles' registers are not live together).
    const auto sub_tile = [&](int r0) {
      const int is = i0 + r0;
      // S^T = K Q^T and dP^T = V dO^T for the wave's M keys x Sub queries.
      float s[kSTs][Atom::kC], dp[kSTs][Atom::kC];
      mma_two_nmajor<Atom, C::kKT, kSTs, kLd>(s, dp, k_a, v_a, smem_u32(q_s) + bn_off + 2 * r0 * kLd,
                                              smem_u32(do_s) + bn_off + 2 * r0 * kLd);

      // P^T and dS^T, masked per element unless the whole sub-tile is visible (a uniform test).
      const bool full = is + Sub <= p.sq && kb + C::kBc <= keys && kb - (is + Sub - 1) >= lo_off && kb + C::kBc - 1 - is <= hi_off;
#pragma unroll
      for (int nt = 0; nt < kSTs; ++nt)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) {
          const atoms::Coord c = Atom::c(lane, q);
          const int il = r0 + nt * N + c.col, i = i0 + il, j = jb + c.row;
          float fac;
          const float x = bwd_score2<Extras, bug>(p, s[nt][q], scale_log2, h, i + diag, j, fac);
          float P = exp2_ftz(x - lse_t[il]);
          if (!full && (i >= p.sq || j >= keys || j - i < lo_off || j - i > hi_off)) P = 0.f;
          s[nt][q] = P;
          dp[nt][q] = bwd_ds<bug>(P, dp[nt][q], dvec_t[il], fac);
        }
      // Both as A fragments of the input type (k = queries), and dS into shared memory for dQ.
      std::uint32_t pa[kQKs][Atom::kA / 2], dsa[kQKs][Atom::kA / 2];
#pragma unroll
      for (int pt = 0; pt < kQKs; ++pt)
#pragma unroll
        for (int r = 0; r < Atom::kA / 2; ++r) {
          constexpr int kTilesPerK = K / N;
          const int t0 = pt * kTilesPerK + kC2A.tile[2 * r], t1 = pt * kTilesPerK + kC2A.tile[2 * r + 1];
          pa[pt][r] = to_bits2<E>(s[t0][kC2A.slot[2 * r]], s[t1][kC2A.slot[2 * r + 1]]);
          dsa[pt][r] = to_bits2<E>(dp[t0][kC2A.slot[2 * r]], dp[t1][kC2A.slot[2 * r + 1]]);
        }
      if constexpr (kAtomicDq) {
#pragma unroll
        for (int nt = 0; nt < kSTs; ++nt)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) {
            const atoms::Coord c = Atom::c(lane, q);
            ds_s[(kDeferDq ? stage * C::kDsTile : 0) + (r0 + nt * N + c.col) * C::kDsLd + wave * M + c.row] =
                to_bits<E>(dp[nt][q]);
          }
      }
      // dV += P^T dO, dK += dS^T Q over the sub-tile's queries (B k-major: ldmatrix .trans).
      const std::uint32_t do_kr = do_k + 2 * r0 * kLd, q_kr = q_k + 2 * r0 * kLd;
      static_for<kQKs>([&](auto pt_) {
        constexpr int pt = decltype(pt_)::value;
        static_for<C::kDT / 2>([&](auto op_) {
          constexpr int ot = 2 * decltype(op_)::value;
          std::uint32_t r[4];
          ldsm_x4<true, 2 * (pt * K * kLd + ot * N)>(do_kr, r);
          const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
          Atom::mma(dv[ot], pa[pt], b0);
          Atom::mma(dv[ot + 1], pa[pt], b1);
          ldsm_x4<true, 2 * (pt * K * kLd + ot * N)>(q_kr, r);
          const std::uint32_t q0[2] = {r[0], r[1]}, q1[2] = {r[2], r[3]};
          Atom::mma(dk[ot], dsa[pt], q0);
          Atom::mma(dk[ot + 1], dsa[pt], q1);
        });
      });
    };
    if constexpr (Sub == Br) {
      sub_tile(0);
    } else {
#pragma unroll 1
      for (int r0 = 0; r0 < Br; r0 += Sub) sub_tile(r0);
    }

    if constexpr (kAtomicDq && !kDeferDq) {
      fp_dev::barrier();  // every wave's dS is in
      dq_step(step);
    }
    if constexpr (kBulkDq) bulk_wait_read();  // the staging tile read by bulk_dq(step - 2) is free again
  }
  if constexpr (kAtomicDq && kDeferDq) {
    if (steps > 0) {
      fp_dev::barrier();  // the last step's dS is in (kBulkDq: and step - 2's staged dQ)
      if constexpr (kBulkDq) {
        if (steps > 1) bulk_dq(steps - 2);
      }
      dq_step(steps - 1);
      if constexpr (kBulkDq) {
        fp_dev::barrier();  // the last step's staged dQ is in
        bulk_dq(steps - 1);
        bulk_wait_all();
      }
    }
  }

  // dK = scale * dS^T Q and dV, in the input type at K's and V's strides; keys past keys(b) are 0.
#pragma unroll
  for (int t = 0; t < C::kDT; ++t)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) {
      const atoms::Coord c = Atom::c(lane, q);
      const int j = kb + wave * M + c.row, x = t * N + c.col;
      if (j < p.sk) {
        store(bp.dk, offset4(p.ks, b, j, kvh, x), p.dtype, dk[t][q] * p.scale);
        store(bp.dv, offset4(p.vs, b, j, kvh, x), p.dtype, dv[t][q]);
      }
    }
}

// Deterministic dQ: one block per (kBm query rows, head, batch), the key tiles of the block's hull
// in increasing order, two stages deep.
template <class Atom, class E, int D, int Waves, int Bn, Bug bug, bool Extras>
__global__ __launch_bounds__(Waves * Atom::kWave) void mma_bwd_dq(BwdParams bp) {
  static_assert(mma_bwd_atom_ok<Atom>(), "mma_bwd needs ldmatrix-fed operands and C fragments usable as A");
  using C = MmaBwdDqConfig<Atom, D, Waves, Bn>;
  constexpr atoms::CRows<Atom> kRows = atoms::derive_c_rows<Atom>();
  constexpr atoms::CToA<Atom> kC2A = atoms::derive_c_to_a<Atom>();
  static_assert(kRows.consistent, "every lane must group its C slots into rows the same way");
  constexpr int M = C::M, N = C::N, K = C::K, R = kRows.rows, kLd = C::kLd;
  const Params& p = bp.f;
  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave, wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int i0 = static_cast<int>(blockIdx.x) * C::kBm, h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int kvh = kv_head<Bug::none>(p, h), keys = keys_of(p, b);
  const int w0 = i0 + wave * M;
  int lo_off, hi_off;
  bwd_offsets32<bug>(p, b, lo_off, hi_off);
  const int diag = static_cast<int>(diag_of<Bug::none>(p, b));
  int blo, bhi;  // the block's keys (blo > bhi: none)
  block_keys_from_offsets32(i0, C::kBm, p.sq, keys, lo_off, hi_off, blo, bhi);

  std::uint16_t* const q_s = fp_dev::dynamic_smem<std::uint16_t>();
  std::uint16_t* const do_s = q_s + C::kQTile;
  std::uint16_t* const kv_s = do_s + C::kQTile;  // stage s: K at kv_s + 2s * kKvTile, V after it
  const auto fill_kv = [&](int stage, int kv0) {
    std::uint16_t* k = kv_s + 2 * stage * C::kKvTile;
    bwd_fill_tile<Bn, D, C::kThreads>(k, kLd, p.k, p.ks, b, kvh, kv0, keys, p.kv_rows16 != 0);
    bwd_fill_tile<Bn, D, C::kThreads>(k + C::kKvTile, kLd, p.v, p.vs, b, kvh, kv0, keys, p.kv_rows16 != 0);
    cp_async_commit();
  };

  // Per local row: its query index, LSE * log2e and D.
  int row_i[R];
  float lse2[R], dvec[R];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    row_i[rr] = w0 + Atom::c(lane, atoms::first_slot_of_row<Atom>(kRows, rr)).row;
    const std::int64_t row = (std::int64_t{b} * p.hq + h) * p.sq + row_i[rr];
    lse2[rr] = row_i[rr] < p.sq ? p.lse[row] * kLog2e : 0.f;
    dvec[rr] = row_i[rr] < p.sq ? bp.dvec[row] : 0.f;
  }
  float dq[C::kOT][Atom::kC];
#pragma unroll
  for (int t = 0; t < C::kOT; ++t)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) dq[t][q] = 0.f;

  const int kv_first = blo <= bhi ? (blo / Bn) * Bn : 0;
  if (blo <= bhi) {
    bwd_fill_tile<C::kBm, D, C::kThreads>(q_s, kLd, p.q, p.qs, b, h, i0, p.sq, p.q_rows16 != 0);
    bwd_fill_tile<C::kBm, D, C::kThreads>(do_s, kLd, bp.dout, p.os, b, h, i0, p.sq, bp.dout_rows16 != 0);
    fill_kv(0, kv_first);
  }
  const float scale_log2 = p.scale * kLog2e;
  const std::uint32_t q_a = smem_u32(q_s) + 2 * ((wave * M + LdsmLanes::a_row(lane)) * kLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t do_a = smem_u32(do_s) + 2 * ((wave * M + LdsmLanes::a_row(lane)) * kLd + 8 * LdsmLanes::a_chunk(lane));
  const std::uint32_t bn_off = 2 * (LdsmLanes::bn_row(lane) * kLd + 8 * LdsmLanes::bn_chunk(lane));
  const std::uint32_t bk_off = 2 * (LdsmLanes::bk_row(lane) * kLd + 8 * LdsmLanes::bk_chunk(lane));
  int stage = 0;
  for (int kv0 = kv_first; blo <= bhi && kv0 <= bhi; kv0 += Bn, stage ^= 1) {
    cp_async_wait<0>();
    fp_dev::barrier();  // this tile is in; every wave is done with the other stage
    if (kv0 + Bn <= bhi) fill_kv(stage ^ 1, kv0 + Bn);
    const std::uint16_t* k_s = kv_s + 2 * stage * C::kKvTile;
    const std::uint16_t* v_s = k_s + C::kKvTile;
    float s[C::kNT][Atom::kC], dp[C::kNT][Atom::kC];
    mma_two_nmajor<Atom, C::kKT, C::kNT, kLd>(s, dp, q_a, do_a, smem_u32(k_s) + bn_off, smem_u32(v_s) + bn_off);
    const bool full = w0 + M <= p.sq && kv0 + Bn <= keys && kv0 - (w0 + M - 1) >= lo_off && kv0 + Bn - 1 - w0 <= hi_off;
#pragma unroll
    for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const int rr = kRows.local[q];
        const int i = row_i[rr], j = kv0 + nt * N + Atom::c(lane, q).col;
        float fac;
        const float x = bwd_score2<Extras, bug>(p, s[nt][q], scale_log2, h, i + diag, j, fac);
        float P = exp2_ftz(x - lse2[rr]);
        if (!full && (i >= p.sq || j >= keys || j - i < lo_off || j - i > hi_off)) P = 0.f;
        dp[nt][q] = bwd_ds<bug>(P, dp[nt][q], dvec[rr], fac);
      }
    // dQ += dS K: A = dS in registers (k = keys), B = K k-major.
    const std::uint32_t k_k = smem_u32(k_s) + bk_off;
    static_for<C::kPT>([&](auto pt_) {
      constexpr int pt = decltype(pt_)::value;
      constexpr int kTilesPerK = K / N;
      std::uint32_t a[Atom::kA / 2];
#pragma unroll
      for (int r = 0; r < Atom::kA / 2; ++r)
        a[r] = to_bits2<E>(dp[pt * kTilesPerK + kC2A.tile[2 * r]][kC2A.slot[2 * r]],
                           dp[pt * kTilesPerK + kC2A.tile[2 * r + 1]][kC2A.slot[2 * r + 1]]);
      static_for<C::kOT / 2>([&](auto op_) {
        constexpr int ot = 2 * decltype(op_)::value;
        std::uint32_t r[4];
        ldsm_x4<true, 2 * (pt * K * kLd + ot * N)>(k_k, r);
        const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        Atom::mma(dq[ot], a, b0);
        Atom::mma(dq[ot + 1], a, b1);
      });
    });
  }
#pragma unroll
  for (int t = 0; t < C::kOT; ++t)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) {
      const int i = row_i[kRows.local[q]];
      if (i < p.sq) store(bp.dq, offset4(p.qs, b, i, h, t * N + Atom::c(lane, q).col), p.dtype, dq[t][q] * p.scale);
    }
}

}  // namespace flashprobe::kernels::dev
