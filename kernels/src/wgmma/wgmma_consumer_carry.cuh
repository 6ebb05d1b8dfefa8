#pragma once
// The consumer warpgroup of wgmma/carry=on (variants.h; WGMMA_NOTES.md, "Against cuDNN"): the
// shipped consumer's pingpong schedule (wgmma_consumer.cuh, whose header gives the stage and turn
// protocols; no soft-cap or ALiBi here) with the phase pipeline carried across row blocks. Where a
// row block with keys follows one with keys, the last phase of the first (its P V alone) and phase 0
// of the second (its S alone, then a softmax with no product of this warpgroup in flight) become
// one phase, issued in one turn as every other phase is: S(0) of the next row block, then the last
// P V of this one; softmax(0) of the next runs while that P V does, then this row block's O is
// stored and O restarts from zero. Both consumers decide alike (the decision depends on the row
// blocks only), so the turns still alternate; the producer walks and loads as for the shipped kernel.
// A copy rather than a template switch inside wgmma_consume: hoisting that function's per-row-block
// state out of its walk, which the carry needs, changed the shipped kernels' machine code (d = 128
// 80 instructions fewer, its soft-cap/ALiBi instantiation 12 more spill stores), and the shipped
// kernels must not move until the variant is measured.
#include <cstdint>

#include "src/wgmma/wgmma_consumer.cuh"

namespace flashprobe::kernels::dev {

template <class E, int D, int Dv>
FP_DEV void wgmma_consume_carried(const WgmmaSmem<D, Dv>& sm, const Params& p) {
  using C = WgmmaConfig<D, Dv>;
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
  const auto turn_begin = [&] { sm90::named_sync(1 + cw, 256); };
  const auto turn_end = [&] { sm90::named_arrive(2 - cw, 256); };
  if (cw == 1) sm90::named_arrive(1, 256);  // consumer 0 goes first
  // O in 32-bit stores of two columns (slots 2j, 2j + 1 of a thread are adjacent columns of one
  // row, checked below at compile time) when the output is 16-bit, its dims contiguous and every
  // pair's offset even on a 4-byte aligned base.
  static_assert(atoms::c_pairs_along_n<OL>(), "O slots 2j, 2j+1 must be adjacent columns of one row");
  const bool pack_o = p.out_dtype != DType::f32 && p.os.d == 1 && (p.os.s % 2 == 0) && (p.os.h % 2 == 0) &&
                      (p.os.b % 2 == 0) && (reinterpret_cast<std::uintptr_t>(p.o) % 4 == 0);

  int n = 0;   // tiles of the walk consumed so far (ring position)
  int qn = 0;  // row blocks with keys so far (Q buffer uses)
  // The row block's state, set by init_rows: its batch and head, per local row the query index and
  // visible keys [lo, hi], in 32 bits (keys and rows are ints; lo and hi are
  // clamped to [0, INT_MAX] and [-1, INT_MAX], which keeps every comparison with a key index
  // unchanged), and the softmax state.
  int b = 0, h = 0;
  int row_i[R], lo_r[R], hi_r[R];
  float m_r[R], l_r[R], alpha[R];
  // Tiles inside [lo(last row), hi(first row)] of the warpgroup are seen whole by all its rows.
  std::int64_t wg_lo_max = INT64_MAX, wg_hi_min = INT64_MIN;
  const auto init_rows = [&](const WgmmaRows& r) {
    const int r0 = r.i0 + cw * 64;
    b = r.b;
    h = r.h;
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
      m_r[rr] = kNegInf;
      l_r[rr] = 0.f;
      alpha[rr] = 0.f;
    }
    wg_lo_max = INT64_MAX;
    wg_hi_min = INT64_MIN;
    if (r0 < p.sq) {
      std::int64_t t0, t1;
      const int wlast = (r0 + 64 < p.sq ? r0 + 64 : p.sq) - 1;
      visible_range<Bug::none>(p, b, wlast, wg_lo_max, t0);
      visible_range<Bug::none>(p, b, r0, t1, wg_hi_min);
      if (r0 + 64 > p.sq) wg_lo_max = INT64_MAX;  // rows past Sq see nothing: never a full tile
    }
  };
  const auto zero_o = [&] {
#pragma unroll
    for (int q = 0; q < OL::kC; ++q) o[q] = 0.f;
  };

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
    if (full_tile) {
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
        float v = sc[q] * scale_log2;
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

  // The end of a row block: row sums across the row's lanes (l_r in place) and their inverses.
  const auto row_finals = [&](float (&inv)[R]) {
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int bit = 1; bit < 32; bit <<= 1)
        if (kRows.lane_mask & bit) l_r[rr] += fp_dev::shfl_xor(l_r[rr], bit, 32);
#pragma unroll
    for (int rr = 0; rr < R; ++rr) inv[rr] = inv_row_sum(l_r[rr]);
  };
  // O / l and the LSE of rows rows[] of (bb, hh), from the given row finals.
  const auto store_rows = [&](const int (&rows)[R], const float (&inv)[R], const float (&m)[R], const float (&l)[R],
                              int bb, int hh) {
    if (pack_o) {
#pragma unroll
      for (int q = 0; q < OL::kC; q += 2) {
        const int rr = kORows.local[q];
        if (rows[rr] < p.sq && OL::c(lt, q).col < p.dv)  // columns past dv are padding: never stored
          store2_16(p.o, offset4(p.os, bb, rows[rr], hh, OL::c(lt, q).col), p.out_dtype, o[q] * inv[rr], o[q + 1] * inv[rr]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < OL::kC; ++q) {
        const int rr = kORows.local[q];
        if (rows[rr] < p.sq && OL::c(lt, q).col < p.dv) store(p.o, offset4(p.os, bb, rows[rr], hh, OL::c(lt, q).col), p.out_dtype, o[q] * inv[rr]);
      }
    }
    if ((lt & kRows.lane_mask) == 0) {
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
        if (rows[rr] < p.sq)
          p.lse[(static_cast<std::int64_t>(bb) * p.hq + hh) * p.sq + rows[rr]] =
              l[rr] > 0.f ? (m[rr] + log2f(l[rr])) * kLn2 : kNegInf;
    }
  };

  // The finished row block's finals (row indices, 1 / l, m, l, batch, head) are kept apart while
  // the next one's state is set up.
  bool carried = false;  // this row block's phase 0 ran in the previous row block's last phase
  float sacc[SL::kC];  // S, then P in place, of the tile in hand
  // One turn of the overlapped schedules: S of the tile in stage st, O rescaled by the last alpha
  // while it runs, then O += P V of the tile in stage sp (its V landed on parity vpar).
  const auto s_and_pv = [&](int st, int sp, int vpar) {
    turn_begin();
    atoms::wgmma_fence();
    issue_s(sacc, st);
    rescale_o();
    sm90::mbar_wait(sm.v_full(sp), vpar);
    fence_o();
    atoms::wgmma_fence();
    issue_pv(sp);
    turn_end();
  };
  const auto body = [&](const WgmmaRows& r, const WgmmaRows& next) {
    if (!carried) {
      init_rows(r);
      zero_o();
    }
    const int nt = r.ntiles;
    const auto stage = [&](int t) { return (n + t) % C::kStages; };
    const auto parity = [&](int t) { return ((n + t) / C::kStages) & 1; };
    if (nt > 0 && !carried) sm90::mbar_wait(sm.q_full(), qn & 1);
    bool carry_out = false;
    if (nt > 0) {
      // Phase 0 issues S(0); phase t (1 <= t < nt) issues S(t) and O += P(t-1) V(t-1) and computes
      // softmax(t) while the second product runs; phase nt issues P(nt-1) V(nt-1). O is rescaled by
      // alpha(t-1) while S(t) runs (O is not an operand of S), and P(t) is packed only after
      // P(t-1) V(t-1) completed (the A registers of a running product must not change).
      if (!carried) {
        sm90::mbar_wait(sm.k_full(stage(0)), parity(0));
        turn_begin();
        atoms::wgmma_fence();
        issue_s(sacc, stage(0));
        turn_end();
        atoms::wgmma_wait<0>();
        release(sm.k_empty(stage(0)));
        if (nt == 1) release(sm.q_empty());
        softmax(sacc, r.kv0(0, Bn));
        pack_p(sacc);
      }
      for (int t = 1; t < nt; ++t) {
        const int st = stage(t), sp = stage(t - 1);
        sm90::mbar_wait(sm.k_full(st), parity(t));
        s_and_pv(st, sp, parity(t - 1));
        atoms::wgmma_wait<1>();  // S(t) done; P(t-1) V(t-1) may still run
        release(sm.k_empty(st));
        if (t == nt - 1) release(sm.q_empty());
        softmax(sacc, r.kv0(t, Bn));
        atoms::wgmma_wait<0>();
        fence_o();
        release(sm.v_empty(sp));
        pack_p(sacc);
      }
      const int sl = stage(nt - 1);
      carry_out = next.ntiles > 0;
      if (carry_out) {
        // This row block's finals, then the next one's state; S(0) of the next is tile nt of the
        // ring from here, its Q the next use of the Q buffer.
        float inv[R], mp[R], lp[R];
        int rows[R];
        row_finals(inv);
#pragma unroll
        for (int rr = 0; rr < R; ++rr) {
          mp[rr] = m_r[rr];
          lp[rr] = l_r[rr];
          rows[rr] = row_i[rr];
        }
        const int bp = b, hp = h;
        sm90::mbar_wait(sm.q_full(), (qn + 1) & 1);
        sm90::mbar_wait(sm.k_full(stage(nt)), parity(nt));
        s_and_pv(stage(nt), sl, parity(nt - 1));
        init_rows(next);         // alpha of this row block was used by rescale_o above
        atoms::wgmma_wait<1>();  // S(0) of the next row block done; the last P V may still run
        release(sm.k_empty(stage(nt)));
        if (next.ntiles == 1) release(sm.q_empty());
        softmax(sacc, next.kv0(0, Bn));
        atoms::wgmma_wait<0>();
        fence_o();
        release(sm.v_empty(sl));
        store_rows(rows, inv, mp, lp, bp, hp);
        zero_o();
        pack_p(sacc);
      } else {
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
    }
    if (nt > 0) {
      n += nt;
      ++qn;
    }
    carried = carry_out;
    if (carry_out) return;  // stored above
    float inv[R];
    row_finals(inv);
    store_rows(row_i, inv, m_r, l_r, b, h);
  };
  for_each_row_block_ahead<D, Dv>(p, body);
}

}  // namespace flashprobe::kernels::dev
