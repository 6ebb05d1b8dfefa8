#pragma once
// mma: FlashAttention-2 forward on the matrix unit, written once over an atom (probes' kernel-facing
// atoms, flashprobe/atoms/*.cuh). Porting to a new target means adding an atom, not editing this.
//
// One block per (query tile of kWaves * Atom::M rows, head, batch); each wave owns Atom::M rows.
//   Q  -> registers, in the atom's A layout (loaded once through Atom::a)
//   K, V tiles of kBn keys -> shared memory/LDS, read into B fragments through Atom::b
//   S = Q K^T on the matrix unit: kBn / N accumulator tiles per wave, in the C layout (Atom::c)
//   online softmax on the accumulators: a row's max and sum combine exactly the lanes that
//     derive_c_rows<Atom>() says share that row (shuffle-xor over its lane bits), per local row
//   P = exp(S - m) converted to the input type and fed back as the A operand of O += P V: in
//     registers when derive_c_to_a<Atom>() proves every A slot of P lives in the same lane's C
//     fragment (NVIDIA mma.sync), else through a per-wave staging area in shared memory (AMD WMMA and
//     MFMA, whose C and A layouts are transposed across lanes)
//   O accumulators in the C layout; at the end O /= l and LSE = m + log(l) (natural log), empty
//     rows O = 0 and LSE = -inf.
// NVIDIA (when the compile-time derivation ldsm_feeds_b says ldmatrix delivers the atom's B
// fragments, as it does for mma.sync m16n8k16): K and V tiles stay row-major in dynamic shared memory,
// two stages deep, filled by cp.async while the previous tile is computed, and read with one
// ldmatrix.x4 (K) or ldmatrix.x4.trans (V) per two n-tiles. Elsewhere (AMD): one stage, V stored
// transposed so that B register pairs are single 32-bit loads.
// Masking: the key tiles outside the block's visible range [lo(first row), hi(last row)] are never
// loaded (causal/window early exit); inside, each score is masked against its own row's interval,
// which also covers the tail of the last tile (keys past keys(b) are zero-filled and masked).
#include <cstdint>

#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/core/device.cuh"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"
#if defined(FP_VENDOR_CUDA)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "flashprobe/atoms/sm75_ldmatrix.cuh"
#include "src/mma/async_copy.cuh"
#endif

namespace flashprobe::kernels::dev {

template <class E>
FP_DEV std::uint16_t to_bits(float x) {
  if constexpr (E::kType == DType::f16) return f32_to_f16(x);
  else return f32_to_bf16_rne(x);
}

// Two values rounded to nearest even and packed (lo in the low half), as the A operand's register
// pairs want them: one cvt.rn.{f16,bf16}x2.f32 on sm_80+ (the bit-twiddling bf16 rounding costs
// about five integer instructions per value), element-wise elsewhere. Same results either way
// (NaN payloads aside: P holds exp2 of finite scores).
template <class E>
FP_DEV std::uint32_t to_bits2(float lo, float hi) {
#if defined(FP_VENDOR_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (E::kType == DType::f16) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
#else
  return atoms::pack2(to_bits<E>(lo), to_bits<E>(hi));
#endif
}

template <class Atom, int D, int Waves, int Bn>
struct MmaConfig {
  static constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  static constexpr int kWaves = Waves, kBn = Bn;
  static constexpr int kBm = Waves * M;                // query rows per block
  static constexpr int kThreads = Waves * Atom::kWave;
  static constexpr int kKT = D / K;                    // k-steps of S = Q K^T
  static constexpr int kNT = Bn / N;                   // S accumulator tiles per wave
  static constexpr int kPT = Bn / K;                   // k-steps of O += P V
  static constexpr int kOT = D / N;                    // O accumulator tiles per wave
  // Shared rows are padded by 8 elements (16 bytes) so that the lanes of a fragment load, which
  // walk down rows, do not all land in one bank.
  static constexpr int kLd = D + 8;    // K tile [key][dim]
  static constexpr int kVLd = Bn + 8;  // V tile stored transposed, [dim][key]: a B fragment's register
                                       // pairs run along k = key, so they become one 32-bit load
  static constexpr int kPLd = Bn + 8;
  static_assert(D % K == 0 && D % N == 0, "head dim must be a multiple of the atom's K and N");
  static_assert(Bn % N == 0 && Bn % K == 0, "key tile must be a multiple of the atom's N and K");
  static_assert(Atom::kA % 2 == 0 && Atom::kB % 2 == 0, "16-bit operands come in register pairs");
};

// First C slot of each local row of an atom: where a lane finds that row's index.
template <class Atom>
constexpr int first_slot_of_row(const atoms::CRows<Atom>& rows, int rr) {
  for (int s = 0; s < Atom::kC; ++s)
    if (rows.local[s] == rr) return s;
  return 0;
}

// Register pairs (slots 2r, 2r+1) of B that are neighbours along k in the same column, starting at an
// even k: with k contiguous in shared memory they load as one 32-bit word.
template <class Atom>
constexpr bool b_pairs_along_k() {
  for (int l = 0; l < Atom::kWave; ++l)
    for (int r = 0; r < Atom::kB / 2; ++r) {
      const atoms::Coord x = Atom::b(l, 2 * r), y = Atom::b(l, 2 * r + 1);
      if (y.row != x.row + 1 || y.col != x.col || x.row % 2 != 0) return false;
    }
  return true;
}
// The same for A along its columns (k): P staged in shared memory row-major.
template <class Atom>
constexpr bool a_pairs_along_k() {
  for (int l = 0; l < Atom::kWave; ++l)
    for (int r = 0; r < Atom::kA / 2; ++r) {
      const atoms::Coord x = Atom::a(l, 2 * r), y = Atom::a(l, 2 * r + 1);
      if (y.col != x.col + 1 || y.row != x.row || x.col % 2 != 0) return false;
    }
  return true;
}

FP_DEV std::uint32_t lds32(const std::uint16_t* p) { return *reinterpret_cast<const std::uint32_t*>(p); }

// The atom's B fragment for the block starting at (k0, n0) of a shared tile stored n-major (B[k][n]
// at t[n * ld + k]): the K tile for S = Q K^T, the transposed V tile for O += P V (generic path).
template <class Atom>
FP_DEV void load_b_nmajor(std::uint32_t (&bf)[Atom::kB / 2], const std::uint16_t* t, int ld, int k0, int n0,
                          int lane) {
  constexpr bool kPairs = b_pairs_along_k<Atom>();
#pragma unroll
  for (int r = 0; r < Atom::kB / 2; ++r) {
    const atoms::Coord b0 = Atom::b(lane, 2 * r);
    [[maybe_unused]] const atoms::Coord b1 = Atom::b(lane, 2 * r + 1);
    if constexpr (kPairs)
      bf[r] = lds32(&t[(n0 + b0.col) * ld + k0 + b0.row]);
    else
      bf[r] = atoms::pack2(t[(n0 + b0.col) * ld + k0 + b0.row], t[(n0 + b1.col) * ld + k0 + b1.row]);
  }
}

// The pipelined path: ldmatrix feeds the atom's B operand from row-major K ([key][dim], n-major)
// and V ([key][dim] = B[k][n], k-major) tiles.
template <class Atom>
constexpr bool use_ldsm() {
#if defined(FP_VENDOR_CUDA)
  return atoms::ldsm_feeds_b<Atom, atoms::SM75_LDMATRIX_X4_Layout<false>, true>() &&
         atoms::ldsm_feeds_b<Atom, atoms::SM75_LDMATRIX_X4_Layout<true>, false>();
#else
  return false;
#endif
}

// Dynamic shared memory of the pipelined path: 2 stages x (K, V) x Bn rows of kLd elements.
template <class Atom, int D, int Bn>
constexpr int mma_dynamic_smem_bytes() {
  return use_ldsm<Atom>() ? 2 * 2 * Bn * (D + 8) * 2 : 0;
}

template <class Atom, class E, int D, int Waves, int Bn>
__global__ __launch_bounds__(Waves * Atom::kWave) void mma_fwd(Params p) {
  using C = MmaConfig<Atom, D, Waves, Bn>;
  // Derived from the atom's layout at compile time (local constexpr copies: device code may not
  // odr-use host statics); indices into them are unrolled loop counters, so they fold away.
  constexpr atoms::CRows<Atom> kRows = atoms::derive_c_rows<Atom>();
  constexpr atoms::CToA<Atom> kC2A = atoms::derive_c_to_a<Atom>();
  static_assert(kRows.consistent, "every lane must group its C slots into rows the same way");
  constexpr int M = C::M, N = C::N, K = C::K, R = kRows.rows;
  constexpr bool kPInRegs = kC2A.in_place;

  constexpr bool kAPairs = a_pairs_along_k<Atom>();
  constexpr bool kLdsm = use_ldsm<Atom>();
  static_assert(!kLdsm || (C::kNT % 2 == 0 && C::kOT % 2 == 0), "ldmatrix.x4 reads two n-tiles at a time");
  constexpr int kStage = 2 * Bn * C::kLd;  // one pipeline stage: K tile then V tile
  __shared__ __align__(16) std::uint16_t k_s[kLdsm ? 1 : Bn * C::kLd];
  __shared__ __align__(16) std::uint16_t vt_s[kLdsm ? 1 : D * C::kVLd];
#if defined(FP_VENDOR_CUDA)
  extern __shared__ __align__(16) std::uint16_t dyn_s[];
#else
  std::uint16_t* const dyn_s = nullptr;
#endif
  __shared__ std::uint16_t p_s[kPInRegs ? 1 : Waves * M * C::kPLd];

  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave;
  const int wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int tid = static_cast<int>(threadIdx.x);
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int hk = kv_head<Bug::none>(p, h);
  // Query tiles in reverse launch order: under a causal mask the last tiles see the most keys, and
  // starting them first keeps the tail of the grid short (the light tiles fill in behind).
  const int i0 = static_cast<int>(gridDim.x - 1 - blockIdx.x) * C::kBm;  // block's first query row
  const int w0 = i0 + wave * M;                           // wave's first query row
  const int keys = keys_of(p, b);
  const std::int64_t diag = diag_of<Bug::none>(p, b);
  const auto* qg = static_cast<const std::uint16_t*>(p.q);
  const auto* kg = static_cast<const std::uint16_t*>(p.k);
  const auto* vg = static_cast<const std::uint16_t*>(p.v);

  // Q in registers, A layout; rows past Sq are zero (they see no key and are never stored).
  std::uint32_t qf[C::kKT][Atom::kA / 2];
#pragma unroll
  for (int kk = 0; kk < C::kKT; ++kk)
#pragma unroll
    for (int r = 0; r < Atom::kA / 2; ++r) {
      std::uint16_t e[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const atoms::Coord a = Atom::a(lane, 2 * r + u);
        const int i = w0 + a.row;
        e[u] = i < p.sq ? qg[offset4(p.qs, b, i, h, kk * K + a.col)] : std::uint16_t{0};
      }
      qf[kk][r] = atoms::pack2(e[0], e[1]);
    }

  // Per local row: its query index, visible key interval and diagonal position; softmax state.
  int row_i[R];
  std::int64_t lo_r[R], hi_r[R], idiag_r[R];
  float m_r[R], l_r[R];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    row_i[rr] = w0 + Atom::c(lane, first_slot_of_row<Atom>(kRows, rr)).row;
    if (row_i[rr] < p.sq) visible_range<Bug::none>(p, b, row_i[rr], lo_r[rr], hi_r[rr]);
    else lo_r[rr] = 1, hi_r[rr] = 0;
    idiag_r[rr] = row_i[rr] + diag;
    m_r[rr] = kNegInf;
    l_r[rr] = 0.f;
  }
  // The block's key range: lo and hi are non-decreasing in the row, so the first and last valid
  // rows bound it.
  std::int64_t blo = 1, bhi = 0;
  const int last = (i0 + C::kBm < p.sq ? i0 + C::kBm : p.sq) - 1;
  if (i0 <= last) {
    std::int64_t t0, t1;
    visible_range<Bug::none>(p, b, i0, blo, t0);
    visible_range<Bug::none>(p, b, last, t1, bhi);
  }

  // The wave's rows see keys [lo, hi] with both ends non-decreasing in the row, so a tile inside
  // [lo(last row), hi(first row)] is seen whole by every row of the wave.
  std::int64_t wave_lo_max = INT64_MAX, wave_hi_min = INT64_MIN;
  if (w0 < p.sq) {
    std::int64_t t0, t1;
    const int wlast = (w0 + M < p.sq ? w0 + M : p.sq) - 1;
    visible_range<Bug::none>(p, b, wlast, wave_lo_max, t0);
    visible_range<Bug::none>(p, b, w0, t1, wave_hi_min);
    if (w0 + M > p.sq) wave_lo_max = INT64_MAX;  // rows past Sq see nothing: never a full tile
  }
  const bool extras = p.softcap > 0.f || p.alibi != nullptr;
  const float scale_log2 = p.scale * kLog2e;

  // Vectorised tile loads when every key row starts 16-byte aligned and its dims are contiguous
  // (any BSHD/BHSD tensor with D % 8 == 0; a fused QKV view too when its strides keep alignment).
  const std::int64_t k_row = b * p.ks.b + hk * p.ks.h, v_row = b * p.vs.b + hk * p.vs.h;
  const bool vec = D % 8 == 0 && p.ks.d == 1 && p.vs.d == 1 && p.ks.s % 8 == 0 && p.vs.s % 8 == 0 &&
                   k_row % 8 == 0 && v_row % 8 == 0 && (reinterpret_cast<std::uintptr_t>(kg) & 15) == 0 &&
                   (reinterpret_cast<std::uintptr_t>(vg) & 15) == 0;

  float o[C::kOT][Atom::kC];
#pragma unroll
  for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
    for (int s = 0; s < Atom::kC; ++s) o[ot][s] = 0.f;

  // Pipelined path: fills one stage (K and V row-major), asynchronously where the rows allow it.
  [[maybe_unused]] const auto fill_stage = [&](int stage, std::int64_t kv0) {
    std::uint16_t* ks = dyn_s + stage * kStage;
    std::uint16_t* vs = ks + Bn * C::kLd;
    if (vec) {
      constexpr int kChunks = D / 8;
      for (int c = tid; c < Bn * kChunks; c += C::kThreads) {
        const int jj = c / kChunks, x8 = (c % kChunks) * 8;
        const std::int64_t j = kv0 + jj;
        const bool in = j < keys;
        const std::int64_t jr = in ? j : 0;  // keys past the end: zero-filled, nothing read
#if defined(FP_VENDOR_CUDA)
        cp_async16(&ks[jj * C::kLd + x8], kg + k_row + jr * p.ks.s + x8, in);
        cp_async16(&vs[jj * C::kLd + x8], vg + v_row + jr * p.vs.s + x8, in);
#endif
      }
    } else {
      for (int idx = tid; idx < Bn * D; idx += C::kThreads) {
        const int jj = idx / D, x = idx % D;
        const std::int64_t j = kv0 + jj;
        const bool in = j < keys;
        ks[jj * C::kLd + x] = in ? kg[offset4(p.ks, b, j, hk, x)] : std::uint16_t{0};
        vs[jj * C::kLd + x] = in ? vg[offset4(p.vs, b, j, hk, x)] : std::uint16_t{0};
      }
    }
#if defined(FP_VENDOR_CUDA)
    cp_async_commit();
#endif
  };
  // ldmatrix row addresses: lane t addresses row t % 8 of matrix t / 8, which holds k-block
  // (t / 8) % 2 of n-tile t / 16 (the assignment ldsm_feeds_b checked).
  [[maybe_unused]] const int k_lane = ((lane >> 4) * 8 + (lane & 7)) * C::kLd + ((lane >> 3) & 1) * 8;
  [[maybe_unused]] const int v_lane = (((lane >> 3) & 1) * 8 + (lane & 7)) * C::kLd + (lane >> 4) * 8;

  const std::int64_t kv_first = blo > 0 ? (blo / Bn) * Bn : 0;
  if constexpr (kLdsm) {
    if (blo <= bhi) fill_stage(0, kv_first);
  }
  int stage = 0;
  for (std::int64_t kv0 = kv_first; blo <= bhi && kv0 <= bhi; kv0 += Bn, stage ^= 1) {
    [[maybe_unused]] const std::uint16_t* ks = dyn_s + stage * kStage;
    [[maybe_unused]] const std::uint16_t* vs = ks + Bn * C::kLd;
    if constexpr (kLdsm) {
      // Prefetch the next tile into the other stage (its readers finished at the end of the last
      // iteration), then wait for this tile's copies only.
      if (kv0 + Bn <= bhi) {
        fill_stage(stage ^ 1, kv0 + Bn);
#if defined(FP_VENDOR_CUDA)
        cp_async_wait<1>();
#endif
      } else {
#if defined(FP_VENDOR_CUDA)
        cp_async_wait<0>();
#endif
      }
      fp_dev::barrier();
    } else {
    fp_dev::barrier();  // the previous tile's readers are done before it is overwritten
    if (vec) {
      // 16-byte chunks: 8 consecutive dims of one key per thread and step.
      constexpr int kChunks = D / 8;
      for (int c = tid; c < Bn * kChunks; c += C::kThreads) {
        const int jj = c / kChunks, x8 = (c % kChunks) * 8;
        const std::int64_t j = kv0 + jj;
        uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
        if (j < keys) {
          kv = *reinterpret_cast<const uint4*>(kg + k_row + j * p.ks.s + x8);
          vv = *reinterpret_cast<const uint4*>(vg + v_row + j * p.vs.s + x8);
        }
        *reinterpret_cast<uint4*>(&k_s[jj * C::kLd + x8]) = kv;
        const std::uint16_t* ve = reinterpret_cast<const std::uint16_t*>(&vv);
#pragma unroll
        for (int u = 0; u < 8; ++u) vt_s[(x8 + u) * C::kVLd + jj] = ve[u];
      }
    } else {
      for (int idx = tid; idx < Bn * D; idx += C::kThreads) {
        const int jj = idx / D, x = idx % D;
        const std::int64_t j = kv0 + jj;
        const bool in = j < keys;
        k_s[jj * C::kLd + x] = in ? kg[offset4(p.ks, b, j, hk, x)] : std::uint16_t{0};
        vt_s[x * C::kVLd + jj] = in ? vg[offset4(p.vs, b, j, hk, x)] : std::uint16_t{0};
      }
    }
    fp_dev::barrier();
    }

    // S = Q K^T: B[k][n] = K[key n][dim k].
    float s[C::kNT][Atom::kC];
#pragma unroll
    for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) s[nt][q] = 0.f;
    if constexpr (kLdsm) {
#if defined(FP_VENDOR_CUDA)
#pragma unroll
      for (int nt = 0; nt < C::kNT; nt += 2)
#pragma unroll
        for (int kk = 0; kk < C::kKT; ++kk) {
          std::uint32_t r[4];
          nvidia::SM75_U32x4_LDSM_N::copy(ks + k_lane + nt * N * C::kLd + kk * K, r);
          const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
          Atom::mma(s[nt], qf[kk], b0);
          Atom::mma(s[nt + 1], qf[kk], b1);
        }
#endif
    } else {
#pragma unroll
      for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
        for (int kk = 0; kk < C::kKT; ++kk) {
          std::uint32_t bf[Atom::kB / 2];
          load_b_nmajor<Atom>(bf, k_s, C::kLd, kk * K, nt * N, lane);
          Atom::mma(s[nt], qf[kk], bf);
        }
    }

    // Scores in base 2 (s * scale * log2(e), so that exp becomes one exp2), mask, and the new row
    // maxima (per lane, then across the lanes of each row). Two uniform fast paths: no soft-cap/ALiBi
    // (one multiply per score), and a tile every row of the wave sees whole (no mask compare).
    float mnew[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) mnew[rr] = m_r[rr];
    const bool full_tile = kv0 >= wave_lo_max && kv0 + Bn - 1 <= wave_hi_min;
    if (!extras && full_tile) {
#pragma unroll
      for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) {
          s[nt][q] *= scale_log2;
          mnew[kRows.local[q]] = fmaxf(mnew[kRows.local[q]], s[nt][q]);
        }
    } else {
#pragma unroll
      for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) {
          const int rr = kRows.local[q];
          const std::int64_t j = kv0 + nt * N + Atom::c(lane, q).col;
          float v = extras ? score(p, s[nt][q], h, idiag_r[rr], j) * kLog2e : s[nt][q] * scale_log2;
          if (j < lo_r[rr] || j > hi_r[rr]) v = kNegInf;
          s[nt][q] = v;
          mnew[rr] = fmaxf(mnew[rr], v);
        }
    }
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int bit = 1; bit < Atom::kWave; bit <<= 1)
        if (kRows.lane_mask & bit) mnew[rr] = fmaxf(mnew[rr], fp_dev::shfl_xor(mnew[rr], bit, Atom::kWave));

    // Rescale what came before; a row whose max is still -inf has nothing to rescale (guarded, so a
    // fully masked tile gives no NaN).
    float muse[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      const float alpha = m_r[rr] == kNegInf ? 0.f : exp2f(m_r[rr] - mnew[rr]);
      m_r[rr] = mnew[rr];
      muse[rr] = mnew[rr] == kNegInf ? 0.f : mnew[rr];
      l_r[rr] *= alpha;
#pragma unroll
      for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q)
          if (kRows.local[q] == rr) o[ot][q] *= alpha;
    }
    // P = exp(S - m); each lane sums its part of the row (combined across lanes once, at the end:
    // every lane of a row rescales by the same alpha, so partial sums stay consistent).
#pragma unroll
    for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const int rr = kRows.local[q];
        const float pv = exp2f(s[nt][q] - muse[rr]);
        s[nt][q] = pv;
        l_r[rr] += pv;
      }

    if constexpr (!kPInRegs) {
      // Stage P in the input type through shared memory: written in the C layout, read in the A layout.
      std::uint16_t* pw = p_s + wave * M * C::kPLd;
#pragma unroll
      for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) {
          const atoms::Coord c = Atom::c(lane, q);
          pw[c.row * C::kPLd + nt * N + c.col] = to_bits<E>(s[nt][q]);
        }
      fp_dev::barrier();
    }

    // O += P V: A = P (rows x keys), B[k][n] = V[key k][dim n].
#pragma unroll
    for (int pt = 0; pt < C::kPT; ++pt) {
      std::uint32_t af[Atom::kA / 2];
#pragma unroll
      for (int r = 0; r < Atom::kA / 2; ++r) {
        if constexpr (kPInRegs) {
          constexpr int kTilesPerK = K / N;
          af[r] = to_bits2<E>(s[pt * kTilesPerK + kC2A.tile[2 * r]][kC2A.slot[2 * r]],
                              s[pt * kTilesPerK + kC2A.tile[2 * r + 1]][kC2A.slot[2 * r + 1]]);
        } else {
          const std::uint16_t* pw = p_s + wave * M * C::kPLd;
          const atoms::Coord a0 = Atom::a(lane, 2 * r);
          [[maybe_unused]] const atoms::Coord a1 = Atom::a(lane, 2 * r + 1);
          if constexpr (kAPairs)
            af[r] = lds32(&pw[a0.row * C::kPLd + pt * K + a0.col]);
          else
            af[r] = atoms::pack2(pw[a0.row * C::kPLd + pt * K + a0.col], pw[a1.row * C::kPLd + pt * K + a1.col]);
        }
      }
      if constexpr (kLdsm) {
#if defined(FP_VENDOR_CUDA)
#pragma unroll
        for (int ot = 0; ot < C::kOT; ot += 2) {
          std::uint32_t r[4];
          nvidia::SM75_U16x8_LDSM_T::copy(vs + v_lane + pt * K * C::kLd + ot * N, r);
          const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
          Atom::mma(o[ot], af, b0);
          Atom::mma(o[ot + 1], af, b1);
        }
#endif
      } else {
#pragma unroll
        for (int ot = 0; ot < C::kOT; ++ot) {
          std::uint32_t bf[Atom::kB / 2];
          load_b_nmajor<Atom>(bf, vt_s, C::kVLd, pt * K, ot * N, lane);
          Atom::mma(o[ot], af, bf);
        }
      }
    }
    if constexpr (kLdsm) fp_dev::barrier();  // this stage is refilled two tiles from now
  }

  // Finish: combine the row sums across the row's lanes, normalize, store O and the LSE.
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int bit = 1; bit < Atom::kWave; bit <<= 1)
      if (kRows.lane_mask & bit) l_r[rr] += fp_dev::shfl_xor(l_r[rr], bit, Atom::kWave);
#pragma unroll
  for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) {
      const int rr = kRows.local[q];
      if (row_i[rr] >= p.sq) continue;
      const atoms::Coord c = Atom::c(lane, q);
      const float inv = l_r[rr] > 0.f ? 1.f / l_r[rr] : 0.f;
      store(p.o, offset4(p.os, b, row_i[rr], h, ot * N + c.col), p.out_dtype, o[ot][q] * inv);
    }
  if ((lane & kRows.lane_mask) == 0) {
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
      if (row_i[rr] < p.sq)
        p.lse[(static_cast<std::int64_t>(b) * p.hq + h) * p.sq + row_i[rr]] =
            l_r[rr] > 0.f ? (m_r[rr] + log2f(l_r[rr])) * kLn2 : kNegInf;
  }
}

}  // namespace flashprobe::kernels::dev
