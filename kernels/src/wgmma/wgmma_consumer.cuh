#pragma once
// A consumer warpgroup of a persistent wgmma block (wgmma_attn.cuh): 64 query rows of each row block
// of the block's walk (for_each_row_block), S = Q K^T, online softmax, O += P V over the row block's
// key tiles in the order of WgmmaSchedule, then O / l and the LSE straight from the accumulators.
// Consumer cw (0 or 1) owns rows i0 + 64 cw ..; lt (0..127) is the thread's "lane" in the atom's layout.
//
// Stage protocol: the n-th tile of the walk lives in stage n % kStages; its K and V are waited for on
// k_full / v_full (parity = (n / kStages) & 1) and released on k_empty / v_empty by one thread of the
// warpgroup once the product that reads them has completed (a wgmma's completion is the whole
// warpgroup's). Q likewise: q_full per row block with keys, q_empty after its last S.
// Turn protocol (pingpong only), named barriers 1 and 2 over the 256 consumer threads: consumer cw
// waits on barrier 1 + cw before issuing a phase's products and arrives on the other's after;
// consumer 1 arrives once up front so that consumer 0 goes first. Both consumers run the same phases
// (every row block's tiles, also when one's rows lie past Sq), so the turns alternate across row
// blocks too and a consumer that finished a row block can start the next while the other stores;
// the last arrival of the walk stays unmatched when the block exits (as in FlashAttention-3).
#include <cstdint>

#include "flashprobe/atoms/sm90_wgmma.cuh"
#include "flashprobe/core/device.cuh"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"
#include "src/wgmma/sm90_roles.cuh"
#include "src/wgmma/sm90_tma.cuh"
#include "src/wgmma/wgmma_block.cuh"
#include "src/wgmma/wgmma_epilogue.h"
#include "src/wgmma/wgmma_mask.h"

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

// kExtras: soft-cap or ALiBi is on. A separate instantiation, as in mma: the score transform (a
// division and tanh per score, ALiBi's slope loads) nearly doubles the consumer's code and spills
// about 100 bytes at D = 128, which the common case should not carry.
// kVecO: O in 16-byte stores after a transpose inside each lane quad (wgmma_epilogue.h) where the
// output allows it (the shipped kernel at 64/64 and 128/128 without extras), 4-byte column pairs
// otherwise and when false.
// kAffine (the shipped kernel without extras where sq + sk <= kMaxLen32; false: wgmma/mask=visible):
// the rows' intervals and the masked tiles' per-score test in 32-bit affine form (wgmma_mask.h)
// instead of four 64-bit visible_range calls per row block.
// kAlign (wgmma/align=sector, with kVecO, no extras): V arrived wgmma_shifts(...).v dims to the right
// (wgmma_producer.cuh), so accumulator column n of O is dim n - that shift; S needs nothing (Q and K
// share their shift).
template <class E, int D, int Dv, WgmmaSchedule kSched, bool kExtras, bool kVecO = false, bool kAffine = false, int S = 0,
          bool kAlign = false>
FP_DEV void wgmma_consume(const WgmmaSmem<D, Dv, S>& sm, const Params& p) {
  using C = WgmmaConfig<D, Dv, S>;
  constexpr int Bn = C::kBn;
  using SOp = typename WgmmaOps<E>::template Op<Bn>;  // S = Q K^T, 64 x Bn per warpgroup
  using OOp = typename WgmmaOps<E>::template Op<C::kDv>;  // O += P V, 64 x kDv
  using SL = atoms::SM90_64xNx16_Layout<Bn>;
  using OL = atoms::SM90_64xNx16_Layout<C::kDv>;
  constexpr atoms::CRows<SL> kRows = atoms::derive_c_rows<SL>();
  constexpr atoms::CRows<OL> kORows = atoms::derive_c_rows<OL>();
  constexpr atoms::WideCToA<OL, SL> kP = atoms::derive_wide_c_to_a<OL, SL>();
  static_assert(kRows.consistent && kORows.consistent, "every thread must group its C slots into rows alike");
  static_assert(kP.in_place, "P must be reusable from the S accumulators as the A operand of P·V");
  static_assert(same_local_rows<SL, OL>(kRows, kORows), "S and O local rows must be the same query rows");
  static_assert(kRows.lane_mask < 32, "a row's threads must sit in one warp (shuffle reductions)");
  constexpr int R = kRows.rows;
  constexpr int kPSteps = Bn / 16;

  const int cw = static_cast<int>(threadIdx.x) / 128 - 1;
  const int lt = static_cast<int>(threadIdx.x) % 128;
  const float scale_log2 = p.scale * kLog2e;

  // Descriptors: Q and K K-major (SBO = 8 rows of 128 B; LBO unused), V N-major (LBO = the next
  // 64-dim chunk, kBn rows of 128 B further; SBO = the next 8 keys). Moved by byte offsets.
  const sm90::DescSw dq = sm90::desc_sw<C::kRowBytes>(sm.base + C::q_rows(cw), C::kKLbo, C::kSbo);
  const sm90::DescSw dk = sm90::desc_sw<C::kRowBytes>(sm.k_s(0), C::kKLbo, C::kSbo);
  const sm90::DescSw dv = sm90::desc_sw<C::kRowBytes>(sm.v_s(0), C::kVLbo, C::kSbo);

  // S(t) = Q K(t)^T over D / 16 k-steps (the first overwrites the accumulators), committed as a group.
  // A head dim d below the class: the TMA delivered zeros past d, so every k-step runs as it is (a
  // branch between the wgmma of one group made ptxas 13.0 serialise them: warning C7519, an injected
  // warpgroup.arrive, in every instantiation).
  const auto issue_s = [&](float (&sc)[SL::kC], int st) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) SOp::ss(sc, dq.at(C::q_start(kk)), dk.at(C::k_start(st, kk)), kk > 0 ? 1 : 0);
    atoms::wgmma_commit();
  };
  float o[OL::kC];
  std::uint32_t pa[kPSteps][4];  // P in the A layout
  // O += P V: B[k = key][n = dim] read N-major from the row-major V tile of stage st.
  const auto issue_pv = [&](int st) {
#pragma unroll
    for (int ks = 0; ks < kPSteps; ++ks) OOp::rs_bmn(o, pa[ks], dv.at(C::v_start(st, ks)), 1);
    atoms::wgmma_commit();
  };
  const auto fence_o = [&] {
#pragma unroll
    for (int q = 0; q < OL::kC; ++q) atoms::wgmma_fence_operand(o[q]);
  };
  const auto release = [&](std::uint64_t* bar) {
    if (lt == 0) sm90::mbar_arrive(bar);
  };
  constexpr bool kTurns = kSched == WgmmaSchedule::pingpong;
  const auto turn_begin = [&] {
    if constexpr (kTurns) sm90::named_sync(1 + cw, 256);
  };
  const auto turn_end = [&] {
    if constexpr (kTurns) sm90::named_arrive(2 - cw, 256);
  };
  if (kTurns && cw == 1) sm90::named_arrive(1, 256);  // consumer 0 goes first
  // O in 32-bit stores of two columns (slots 2j, 2j + 1 of a thread are adjacent columns of one
  // row, checked below at compile time) when the output is 16-bit, its dims contiguous and every
  // pair's offset even on a 4-byte aligned base.
  static_assert(atoms::c_pairs_along_n<OL>(), "O slots 2j, 2j+1 must be adjacent columns of one row");
  const auto packable = [&] {
    return p.out_dtype != DType::f32 && p.os.d == 1 && (p.os.s % 2 == 0) && (p.os.h % 2 == 0) && (p.os.b % 2 == 0) &&
           (reinterpret_cast<std::uintptr_t>(p.o) % 4 == 0);
  };
  // kVecO reads it again at each row block's stores (from the parameters): held across the walk, the
  // flag was spilled to local memory at d128.
  [[maybe_unused]] const bool pack_o = !kVecO && packable();
  static_assert(!kVecO || vec16_layout_ok<OL>(), "the quad transpose of wgmma_epilogue.h does not fit this C layout");
  static_assert(!kAffine || (!kExtras && cols_affine_in_lane<SL>()), "the affine mask: no extras, lane columns affine");

  int n = 0;   // tiles of the walk consumed so far (ring position)
  int qn = 0;  // row blocks with keys so far (Q buffer uses)
  for_each_row_block<D, Dv>(p, [&](const WgmmaRows& r) {
    const int r0 = r.i0 + cw * 64;
    const int b = r.b, h = r.h;
    const std::int64_t diag = diag_of<Bug::none>(p, b);
    // Per local row: query index, visible keys [lo, hi] and diagonal position, in 32 bits (keys and
    // rows are ints; lo and hi are clamped to [0, INT_MAX] and [-1, INT_MAX], which keeps every
    // comparison with a key index unchanged), and the softmax state.
    int row_i[R], lo_r[R], hi_r[R], idiag_r[R];
    float m_r[R], l_r[R], alpha[R];
    const auto clamp32 = [](std::int64_t x, std::int64_t lo) {
      return static_cast<int>(x < lo ? lo : (x > INT32_MAX ? INT32_MAX : x));
    };
    // Tiles inside [lo(last row), hi(first row)] of the warpgroup are seen whole by all its rows.
    std::int64_t wg_lo_max = INT64_MAX, wg_hi_min = INT64_MIN;
    if constexpr (kAffine) {
      const AffineMask am = affine_mask(diag, keys_of(p, b), p.sq, p.causal != CausalMode::none, p.window_left, p.window_right);
#pragma unroll
      for (int rr = 0; rr < R; ++rr) {
        row_i[rr] = r0 + SL::c(lt, atoms::first_slot_of_row<SL>(kRows, rr)).row;
        am.row(row_i[rr], lo_r[rr], hi_r[rr]);
        m_r[rr] = kNegInf;
        l_r[rr] = 0.f;
        alpha[rr] = 0.f;
      }
      int wlo = 0, whi = 0;
      am.whole(r0, 64, wlo, whi);
      wg_lo_max = wlo == INT_MAX ? INT64_MAX : wlo;
      wg_hi_min = whi;
    } else {
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
      alpha[rr] = 0.f;
    }
    if (r0 < p.sq) {
      std::int64_t t0, t1;
      const int wlast = (r0 + 64 < p.sq ? r0 + 64 : p.sq) - 1;
      visible_range<Bug::none>(p, b, wlast, wg_lo_max, t0);
      visible_range<Bug::none>(p, b, r0, t1, wg_hi_min);
      if (r0 + 64 > p.sq) wg_lo_max = INT64_MAX;  // rows past Sq see nothing: never a full tile
    }
    }
#pragma unroll
    for (int q = 0; q < OL::kC; ++q) o[q] = 0.f;

    // Softmax of tile kv0 on the finished S accumulators: base-2 scores, mask (same fast paths as
    // mma), row maxima across the row's lanes, alpha = exp2(m_old - m_new), P = exp2(S - m) in place,
    // row sums per thread (combined across lanes once, at the end). O is not touched here.
    const auto softmax = [&](float (&sc)[SL::kC], int kv0) {
#pragma unroll
      for (int q = 0; q < SL::kC; ++q) atoms::wgmma_fence_operand(sc[q]);
      float mnew[R];
#pragma unroll
      for (int rr = 0; rr < R; ++rr) mnew[rr] = m_r[rr];
      const bool full_tile = kv0 >= wg_lo_max && kv0 + Bn - 1 <= wg_hi_min;
      if (!kExtras && full_tile) {
#pragma unroll
        for (int q = 0; q < SL::kC; ++q) {
          sc[q] *= scale_log2;
          mnew[kRows.local[q]] = fmaxf(mnew[kRows.local[q]], sc[q]);
        }
      } else if constexpr (kAffine) {
        // Column kv0 + c0 + col_offset(q) against each row's limits relative to kv0 + c0.
        int lim_a[R], lim_b[R];
        const int c0 = SL::c(lt, 0).col;
#pragma unroll
        for (int rr = 0; rr < R; ++rr) limits(lo_r[rr], hi_r[rr], kv0, c0, lim_a[rr], lim_b[rr]);
#pragma unroll
        for (int q = 0; q < SL::kC; ++q) {
          const int rr = kRows.local[q];
          float v = sc[q] * scale_log2;
          if (masked(col_offset<SL>(q), lim_a[rr], lim_b[rr])) v = kNegInf;
          sc[q] = v;
          mnew[rr] = fmaxf(mnew[rr], v);
        }
      } else {
#pragma unroll
        for (int q = 0; q < SL::kC; ++q) {
          const int rr = kRows.local[q];
          const int j = kv0 + SL::c(lt, q).col;
          float v;
          if constexpr (kExtras) v = score(p, sc[q], h, idiag_r[rr], j) * kLog2e;
          else v = sc[q] * scale_log2;
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
      // A row whose max is still -inf has nothing to rescale (no NaN from a fully masked tile). The
      // guard is softmax_ref's (attn_common.cuh) spelled out: through softmax_ref, nvcc 13.0 emits
      // 29-61 more sm_90a instructions here (57 more register moves at d = 128).
      float muse[R];
#pragma unroll
      for (int rr = 0; rr < R; ++rr) {
        alpha[rr] = m_r[rr] == kNegInf ? 0.f : exp2_ftz(m_r[rr] - mnew[rr]);
        m_r[rr] = mnew[rr];
        muse[rr] = mnew[rr] == kNegInf ? 0.f : mnew[rr];
        l_r[rr] *= alpha[rr];
      }
#pragma unroll
      for (int q = 0; q < SL::kC; ++q) {
        const int rr = kRows.local[q];
        sc[q] = exp2_ftz(sc[q] - muse[rr]);
        l_r[rr] += sc[q];
      }
    };
    const auto rescale_o = [&] {
#pragma unroll
      for (int q = 0; q < OL::kC; ++q) o[q] *= alpha[kORows.local[q]];
    };
    const auto pack_p = [&](const float (&sc)[SL::kC]) {
#pragma unroll
      for (int ks = 0; ks < kPSteps; ++ks)
#pragma unroll
        for (int e = 0; e < 4; ++e) pa[ks][e] = to_bits2<E>(sc[kP.slot[ks][2 * e]], sc[kP.slot[ks][2 * e + 1]]);
    };

    const int nt = r.ntiles;
    const auto stage = [&](int t) { return (n + t) % C::kStages; };
    const auto parity = [&](int t) { return ((n + t) / C::kStages) & 1; };
    if (nt > 0) sm90::mbar_wait(sm.q_full(), qn & 1);
    if constexpr (kSched == WgmmaSchedule::serial) {
      for (int t = 0; t < nt; ++t) {
        const int st = stage(t), par = parity(t);
        float sc[SL::kC];
        sm90::mbar_wait(sm.k_full(st), par);
        atoms::wgmma_fence();
        issue_s(sc, st);
        atoms::wgmma_wait<0>();
        release(sm.k_empty(st));
        if (t == nt - 1) release(sm.q_empty());
        softmax(sc, r.kv0(t, Bn));
        rescale_o();
        pack_p(sc);
        sm90::mbar_wait(sm.v_full(st), par);
        fence_o();
        atoms::wgmma_fence();
        issue_pv(st);
        atoms::wgmma_wait<0>();
        fence_o();
        release(sm.v_empty(st));
      }
    } else if (nt > 0) {
      // Phase 0 issues S(0); phase t (1 <= t < nt) issues S(t) and O += P(t-1) V(t-1) and computes
      // softmax(t) while the second product runs; phase nt issues P(nt-1) V(nt-1). O is rescaled by
      // alpha(t-1) while S(t) runs (O is not an operand of S), and P(t) is packed only after
      // P(t-1) V(t-1) completed (the A registers of a running product must not change).
      float sc[SL::kC];
      sm90::mbar_wait(sm.k_full(stage(0)), parity(0));
      turn_begin();
      atoms::wgmma_fence();
      issue_s(sc, stage(0));
      turn_end();
      atoms::wgmma_wait<0>();
      release(sm.k_empty(stage(0)));
      if (nt == 1) release(sm.q_empty());
      softmax(sc, r.kv0(0, Bn));
      pack_p(sc);
      for (int t = 1; t < nt; ++t) {
        const int st = stage(t), sp = stage(t - 1);
        sm90::mbar_wait(sm.k_full(st), parity(t));
        turn_begin();
        atoms::wgmma_fence();
        issue_s(sc, st);
        rescale_o();
        sm90::mbar_wait(sm.v_full(sp), parity(t - 1));
        fence_o();
        atoms::wgmma_fence();
        issue_pv(sp);
        turn_end();
        atoms::wgmma_wait<1>();  // S(t) done; P(t-1) V(t-1) may still run
        release(sm.k_empty(st));
        if (t == nt - 1) release(sm.q_empty());
        softmax(sc, r.kv0(t, Bn));
        atoms::wgmma_wait<0>();
        fence_o();
        release(sm.v_empty(sp));
        pack_p(sc);
      }
      const int sl = stage(nt - 1);
      turn_begin();
      rescale_o();
      sm90::mbar_wait(sm.v_full(sl), parity(nt - 1));
      fence_o();
      atoms::wgmma_fence();
      issue_pv(sl);
      turn_end();
      atoms::wgmma_wait<0>();
      fence_o();
      release(sm.v_empty(sl));
    }
    if (nt > 0) {
      n += nt;
      ++qn;
    }

    // Finish: row sums across the row's lanes, normalise, store O and the LSE.
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int bit = 1; bit < 32; bit <<= 1)
        if (kRows.lane_mask & bit) l_r[rr] += fp_dev::shfl_xor(l_r[rr], bit, 32);
    float inv[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) inv[rr] = inv_row_sum(l_r[rr]);
    const bool pack_here = kVecO ? packable() : pack_o;
    bool stored = false;
    // O's accumulator column n holds dim n - oc (0 but with kAlign); the dims stored are 0 .. dv - 1.
    int oc = 0;
    if constexpr (kAlign) oc = wgmma_shifts<D, Dv>(p, r).v;
    if constexpr (kVecO) {
      // 16-byte stores of 8 columns (dv is a multiple of 8, so a piece is wholly inside or past it)
      // where every row's start is 16-byte aligned.
      const bool vec_o = pack_here && (p.os.s % 8 == 0) && (p.os.h % 8 == 0) && (p.os.b % 8 == 0) &&
                         (reinterpret_cast<std::uintptr_t>(p.o) % 16 == 0);
      if (vec_o) {
        const int qd = lt % 4;
        // The two rows of this thread (h = 0, 1), dims contiguous (pack_here): each store adds its column.
        std::uint16_t* orow[2];
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          orow[hh] = static_cast<std::uint16_t*>(p.o) + offset4(p.os, b, row_i[kORows.local[2 * hh]], h, 0);
#pragma unroll
        for (int x = 0; x < vec16_groups(C::kDv); ++x) {
          const int hh = vec16_group_h(x), g = vec16_group_g(x);
          const int rr = kORows.local[2 * hh];
          std::uint32_t a[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int q = vec16_slot(hh, g, i);
            a[i] = to_bits2_as(p.out_dtype, o[q] * inv[rr], o[q + 1] * inv[rr]);
          }
#pragma unroll
          for (int m = 2; m >= 1; m /= 2) {
            std::uint32_t snd[2], rcv[2];
            quad_send(a, qd, m, snd);
            rcv[0] = fp_dev::shfl_xor(snd[0], m, 32);
            rcv[1] = fp_dev::shfl_xor(snd[1], m, 32);
            quad_recv(a, qd, m, rcv);
          }
          const int col = vec16_col(qd, g) - oc;
          if (row_i[rr] < p.sq && (!kAlign || col >= 0) && col < p.dv)
            *reinterpret_cast<uint4*>(orow[hh] + col) = make_uint4(a[0], a[1], a[2], a[3]);
        }
        stored = true;
      }
    }
    if (stored) {
    } else if (pack_here) {
#pragma unroll
      for (int q = 0; q < OL::kC; q += 2) {
        const int rr = kORows.local[q], col = OL::c(lt, q).col - oc;
        if (row_i[rr] < p.sq && (!kAlign || col >= 0) && col < p.dv)  // columns past dv (or before the shift) are padding: never stored
          store2_16(p.o, offset4(p.os, b, row_i[rr], h, col), p.out_dtype, o[q] * inv[rr], o[q + 1] * inv[rr]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < OL::kC; ++q) {
        const int rr = kORows.local[q], col = OL::c(lt, q).col - oc;
        if (row_i[rr] < p.sq && (!kAlign || col >= 0) && col < p.dv) store(p.o, offset4(p.os, b, row_i[rr], h, col), p.out_dtype, o[q] * inv[rr]);
      }
    }
    if ((lt & kRows.lane_mask) == 0) {
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
        if (row_i[rr] < p.sq)
          p.lse[(static_cast<std::int64_t>(b) * p.hq + h) * p.sq + row_i[rr]] =
              l_r[rr] > 0.f ? (m_r[rr] + log2f(l_r[rr])) * kLn2 : kNegInf;
    }
  });
}

}  // namespace flashprobe::kernels::dev
