#pragma once
// decode/mma=on's split kernel (variants.h; NVIDIA, sm_80 and later): the query rows that read one
// kv head (a GQA group's heads x the sq positions, up to the atom's M = 16) are the rows of one
// tensor-core tile, and K/V are streamed once per (kv head, split) through shared memory.
//
// Block ((split), kv head, b) of kWaves waves: K and V tiles of kBn keys are copied by cp.async into
// a ring of kStages stages (the next kStages - 1 tiles in flight while one computes); wave w takes
// keys [16 w, 16 w + 16) of every tile: S = Q K^T over them (Atom::mma; Q's A fragments kept in
// registers, K's B fragments by ldmatrix), the online softmax per row in base 2, then O += P V with P
// reused as the A fragment in place (derive_c_to_a) and V's B fragments by ldmatrix.trans. Each wave
// keeps its own (m, l, O) per row; at the end the waves are merged through shared memory (the same
// LSE-weighted merge as decode's flush) and each row's partial (o normalised, lse) is written for
// decode's combine kernel. Register placement comes from the atom's a(), c() and the derivations
// of flashprobe/atoms/layouts.h and sm75_ldmatrix.h (static_asserts below); shared-memory tile
// layout and ldmatrix lane addresses are the mma kernel's (MmaConfig, TileChunks).
//
// Domain (decode_mma_takes, decode_plan.h): no soft-cap or ALiBi, group * sq <= 16, d and dv <= 128;
// the launcher (decode.cu) sends every other problem to decode's split kernel, so the variant's domain
// is decode's. K/V rows that are not aligned 16-byte chunks fill the same tiles element by element.
#include "flashprobe/atoms/layouts.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/decode.cuh"
#include "src/mma/async_copy.cuh"
#include "src/mma/ldsm_imm.cuh"
#include "src/mma/mma_attn.cuh"

namespace flashprobe::kernels::dev {

template <class E>
struct DecodeMmaAtom;
template <>
struct DecodeMmaAtom<F16> {
  using type = atoms::SM80_16x8x16_F32F16F16F32_TN;
};
template <>
struct DecodeMmaAtom<BF16> {
  using type = atoms::SM80_16x8x16_F32BF16BF16F32_TN;
};

inline constexpr int kDecodeMmaWaves = 4;
inline constexpr int kDecodeMmaBn = 64;     // keys per K/V tile: 16 per wave
inline constexpr int kDecodeMmaStages = 3;  // tiles in the ring: two in flight while one computes
static_assert(kDecodeMmaWaves * 32 == kDecodeThreads, "decode/mma=on runs decode's block size");

template <class E, int D>
struct DecodeMmaConfig {
  using Atom = typename DecodeMmaAtom<E>::type;
  using C = MmaConfig<Atom, D, kDecodeMmaWaves, kDecodeMmaBn, 1>;
  static constexpr int kKT = D / Atom::K, kOT = D / Atom::N;
  static constexpr int kWaveKeys = kDecodeMmaBn / kDecodeMmaWaves;
  static constexpr int kNT = kWaveKeys / Atom::N;  // S tiles per wave and key tile
  static constexpr int kStageElems = 2 * kDecodeMmaBn * C::kKvLd;
  static constexpr int kRingBytes = kDecodeMmaStages * kStageElems * 2;
  // The waves' partial states for the merge, in the ring's memory once the last tile is computed.
  static constexpr int kMergeBytes = (kDecodeMmaWaves * Atom::M * D + 2 * kDecodeMmaWaves * Atom::M) * 4;
  static constexpr int kSmemBytes = kRingBytes > kMergeBytes ? kRingBytes : kMergeBytes;
  static_assert(kDecodeMaxRowsPerTensorTile == Atom::M, "decode_mma_takes' row limit is the atom's M");
  static_assert(kWaveKeys == Atom::K, "a wave's keys are one k-step of P V");
  static_assert(C::kLdsm && C::kSwz, "ldmatrix feeds the atom's A and B operands, swizzled tiles");
};

// kVec: K/V rows are aligned 16-byte chunks (rows_16b), copied by cp.async; otherwise each element is
// loaded and stored into the same shared-memory tile, so both give the same tiles and bitwise the same
// output (the batch-invariance property compares a strided batch with a contiguous element).
template <class E, int D, bool kVec>
__global__ __launch_bounds__(kDecodeThreads, 2) void decode_split_mma(Params p, int splits, int chunk, DecodeWorkspace ws) {
  using Cfg = DecodeMmaConfig<E, D>;
  using Atom = typename Cfg::Atom;
  using C = typename Cfg::C;
  constexpr int Bn = kDecodeMmaBn, S = kDecodeMmaStages, M = Atom::M;
  constexpr atoms::CRows<Atom> kRows = atoms::derive_c_rows<Atom>();
  constexpr atoms::CToA<Atom> kC2A = atoms::derive_c_to_a<Atom>();
  static_assert(kRows.consistent && kC2A.in_place, "P = softmax(S) feeds P V from the same lanes' registers");
  static_assert(Atom::K / Atom::N == 2 && Cfg::kNT == 2, "one k-step of P spans a wave's two S tiles");
  constexpr int R = kRows.rows;  // local rows per lane
  allow_dependent_launch();

  extern __shared__ __align__(128) std::uint8_t dyn_s[];
  auto* ring = reinterpret_cast<std::uint16_t*>(dyn_s);
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % Atom::kWave, wave = tid / Atom::kWave;
  const int split = static_cast<int>(blockIdx.x), hk = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int rows = p.group * p.sq;
  auto head_of = [&](int t) { return mask::q_head(hk, t / p.sq, p.group); };
  auto pos_of = [&](int t) { return t % p.sq; };

  // The split's keys, each row's visible part of them, and their union [jlo, jhi].
  const std::int64_t split_begin = std::int64_t{split} * chunk;
  const int s0 = split_begin < p.sk ? static_cast<int>(split_begin) : p.sk;
  const int s1 = (split_begin + chunk < p.sk ? static_cast<int>(split_begin + chunk) : p.sk) - 1;
  auto row_range = [&](int t, int& lo, int& hi) {
    std::int64_t vlo = 1, vhi = 0;
    if (t < rows) visible_range<Bug::none>(p, b, pos_of(t), vlo, vhi);
    vlo = vlo > s0 ? vlo : s0;
    vhi = vhi < s1 ? vhi : s1;
    if (vlo > vhi) vlo = 1, vhi = 0;
    lo = static_cast<int>(vlo), hi = static_cast<int>(vhi);
  };
  int jlo = s1 + 1, jhi = s0 - 1;
  for (int t = 0; t < rows && t < M; ++t) {
    int lo, hi;
    row_range(t, lo, hi);
    if (lo <= hi) jlo = lo < jlo ? lo : jlo, jhi = hi > jhi ? hi : jhi;
  }
  // This lane's rows (the C layout's local rows) and their ranges.
  int row_of[R], lo_r[R], hi_r[R];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    row_of[rr] = Atom::c(lane, atoms::first_slot_of_row(kRows, rr)).row;
    row_range(row_of[rr], lo_r[rr], hi_r[rr]);
  }

  // Q as A fragments, one per k-step, in the atom's A layout; rows past the group and dims past d 0.
  const auto* qg = static_cast<const std::uint16_t*>(p.q);
  std::uint32_t qa[Cfg::kKT][Atom::kA / 2];
#pragma unroll
  for (int kk = 0; kk < Cfg::kKT; ++kk)
#pragma unroll
    for (int r = 0; r < Atom::kA / 2; ++r) {
      std::uint16_t e[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const atoms::Coord a = Atom::a(lane, 2 * r + h);
        const int x = kk * Atom::K + a.col;
        e[h] = a.row < rows && x < p.d ? qg[offset4(p.qs, b, pos_of(a.row), head_of(a.row), x)] : std::uint16_t{0};
      }
      qa[kk][r] = atoms::pack2(e[0], e[1]);
    }
  const float qscale = p.scale * kLog2e;

  float m[R], l[R], o[Cfg::kOT][Atom::kC];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) m[rr] = kNegInf, l[rr] = 0.f;
#pragma unroll
  for (int ot = 0; ot < Cfg::kOT; ++ot)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) o[ot][q] = 0.f;

  // One tile's K and V into stage `stage`: keys outside [jlo, jhi] and dims past d (K) or dv (V)
  // zero-filled, nothing read for them (the source then names key jlo's row, inside the tensor).
  const auto* kg = static_cast<const std::uint16_t*>(p.k) + offset4(p.ks, b, 0, hk, 0);
  const auto* vg = static_cast<const std::uint16_t*>(p.v) + offset4(p.vs, b, 0, hk, 0);
  auto fill = [&](int stage, int kv0) {
    std::uint16_t* ks = ring + stage * Cfg::kStageElems;
    std::uint16_t* vs = ks + Bn * C::kKvLd;
    if constexpr (!kVec) {
      // Element loads, the same zeros: plain stores, made visible by the barrier before the tile is read.
      for (int idx = tid; idx < Bn * D; idx += kDecodeThreads) {
        const int jj = idx / D, x = idx % D, j = kv0 + jj;
        const bool in_key = j >= jlo && j <= jhi;
        ks[C::template at<C::kSwz>(jj, x)] = in_key && x < p.d ? kg[std::int64_t{j} * p.ks.s + x * p.ks.d] : std::uint16_t{0};
        vs[C::template at<C::kSwz>(jj, x)] = in_key && x < p.dv ? vg[std::int64_t{j} * p.vs.s + x * p.vs.d] : std::uint16_t{0};
      }
    } else {
      using T = TileChunks<Bn, D / 8, kDecodeThreads>;
#pragma unroll
      for (int it = 0; it < T::kIters; ++it) {
        int jj, x8;
        if (!T::at(tid, it, jj, x8)) continue;
        const int j = kv0 + jj;
        const bool in_key = j >= jlo && j <= jhi, in_k = in_key && x8 < p.d, in_v = in_key && x8 < p.dv;
        const int sm = T::template smem_at<C, C::kSwz>(tid, it);
        cp_async16(&ks[sm], kg + (in_k ? std::int64_t{j} * p.ks.s + x8 : std::int64_t{jlo} * p.ks.s), in_k);
        cp_async16(&vs[sm], vg + (in_v ? std::int64_t{j} * p.vs.s + x8 : std::int64_t{jlo} * p.vs.s), in_v);
      }
    }
  };
  // ldmatrix lane addresses (mma_attn.cuh's, the wave's 16 keys as its rows): K n-major (ldsm_feeds_b:
  // lane t addresses row t % 8 of matrix t / 8 = k-block (t / 8) % 2 of n-tile t / 16), V k-major.
  const int k_lane = C::template lane_at<C::kSwz>(wave * Cfg::kWaveKeys + (lane >> 4) * 8 + (lane & 7), (lane >> 3) & 1);
  const int v_lane = C::template lane_at<C::kSwz>(wave * Cfg::kWaveKeys + ((lane >> 3) & 1) * 8 + (lane & 7), lane >> 4);

  auto compute = [&](int stage, int kv0) {
    const std::uint16_t* ks = ring + stage * Cfg::kStageElems;
    const std::uint16_t* vs = ks + Bn * C::kKvLd;
    float s[Cfg::kNT][Atom::kC];
#pragma unroll
    for (int nt = 0; nt < Cfg::kNT; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) s[nt][q] = 0.f;
    const std::uint32_t k_addr = smem_u32(ks) + 2 * k_lane;
    static_for<Cfg::kKT>([&](auto kk_) {
      constexpr int kk = decltype(kk_)::value;
      std::uint32_t r[4];
      ldsm_x4<false, C::template kStepImm<C::kSwz, kk>>(C::template step_addr<C::kSwz, kk>(k_addr), r);
      const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      Atom::mma(s[0], qa[kk], b0);
      Atom::mma(s[1], qa[kk], b1);
    });
    // Scores in base 2, masked per row; the rows' maxima over the wave's keys.
    float mx[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) mx[rr] = m[rr];
#pragma unroll
    for (int nt = 0; nt < Cfg::kNT; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const atoms::Coord c = Atom::c(lane, q);
        const int rr = kRows.local[q], j = kv0 + wave * Cfg::kWaveKeys + nt * Atom::N + c.col;
        s[nt][q] = j >= lo_r[rr] && j <= hi_r[rr] ? s[nt][q] * qscale : kNegInf;
        mx[rr] = fmaxf(mx[rr], s[nt][q]);
      }
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int bit = 1; bit < Atom::kWave; bit <<= 1)
        if (kRows.lane_mask & bit) mx[rr] = fmaxf(mx[rr], fp_dev::shfl_xor(mx[rr], bit, Atom::kWave));
    float base[R], alpha[R];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      base[rr] = softmax_ref(mx[rr]);  // nothing visible yet: weights exp2(-inf) = 0, not NaN
      alpha[rr] = exp2f(m[rr] - base[rr]);
      l[rr] *= alpha[rr];
      m[rr] = mx[rr];
    }
#pragma unroll
    for (int nt = 0; nt < Cfg::kNT; ++nt)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) {
        const int rr = kRows.local[q];
        s[nt][q] = exp2f(s[nt][q] - base[rr]);
        l[rr] += s[nt][q];
      }
#pragma unroll
    for (int ot = 0; ot < Cfg::kOT; ++ot)
#pragma unroll
      for (int q = 0; q < Atom::kC; ++q) o[ot][q] *= alpha[kRows.local[q]];
    // O += P V: P's A fragment from the S registers in place.
    std::uint32_t af[Atom::kA / 2];
#pragma unroll
    for (int r = 0; r < Atom::kA / 2; ++r)
      af[r] = to_bits2<E>(s[kC2A.tile[2 * r]][kC2A.slot[2 * r]], s[kC2A.tile[2 * r + 1]][kC2A.slot[2 * r + 1]]);
    const std::uint32_t v_addr = smem_u32(vs) + 2 * v_lane;
    static_for<Cfg::kOT / 2>([&](auto op_) {
      constexpr int ot = 2 * decltype(op_)::value;
      std::uint32_t r[4];
      ldsm_x4<true, C::template kStepImm<C::kSwz, ot / 2>>(C::template step_addr<C::kSwz, ot / 2>(v_addr), r);
      const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      Atom::mma(o[ot], af, b0);
      Atom::mma(o[ot + 1], af, b1);
    });
  };

  if (smem_u32(dyn_s) & 127) fp_dev::trap();  // the swizzled addressing needs 128-byte aligned tiles
  // The ring: tile t in stage t % S; S - 1 tiles in flight ahead of the one computing. Tiles start on
  // the split's grid (s0 + n * Bn). Block-uniform trip count (the barriers need every thread).
  const int jb0 = jlo <= jhi ? s0 + (jlo - s0) / Bn * Bn : 0;
  const int tiles = jlo <= jhi ? (jhi - jb0) / Bn + 1 : 0;
#pragma unroll
  for (int t = 0; t < S - 1; ++t) {
    if (t < tiles) fill(t, jb0 + t * Bn);
    cp_async_commit();
  }
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<S - 2>();
    fp_dev::barrier();  // tile t is in; every wave is done with tile t - 1, whose stage is refilled now
    if (t + S - 1 < tiles) fill((t + S - 1) % S, jb0 + (t + S - 1) * Bn);
    cp_async_commit();
    compute(t % S, jb0 + t * Bn);
  }
  cp_async_wait<0>();
  fp_dev::barrier();  // the ring's memory becomes the merge's

  // Each wave's state per row into shared memory (l summed over the lanes of a row first), then the
  // block merges the waves per (row, dim) and writes the partial, as decode's flush does.
  auto* part_o = reinterpret_cast<float*>(dyn_s);                      // [wave][row][D]
  float* part_m = part_o + kDecodeMmaWaves * M * D, *part_l = part_m + kDecodeMmaWaves * M;  // [wave][row]
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int bit = 1; bit < Atom::kWave; bit <<= 1)
      if (kRows.lane_mask & bit) l[rr] += fp_dev::shfl_xor(l[rr], bit, Atom::kWave);
#pragma unroll
  for (int ot = 0; ot < Cfg::kOT; ++ot)
#pragma unroll
    for (int q = 0; q < Atom::kC; ++q) {
      const atoms::Coord c = Atom::c(lane, q);
      part_o[(wave * M + c.row) * D + ot * Atom::N + c.col] = o[ot][q];
    }
  if ((lane & kRows.lane_mask) == 0)
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      part_m[wave * M + row_of[rr]] = m[rr];
      part_l[wave * M + row_of[rr]] = l[rr];
    }
  fp_dev::barrier();
  const int tile_rows = rows < M ? rows : M;
  for (int x = tid; x < tile_rows * p.dv; x += kDecodeThreads) {
    const int t = x / p.dv, dim = x % p.dv;
    float mb = kNegInf;
    for (int w = 0; w < kDecodeMmaWaves; ++w) mb = fmaxf(mb, part_m[w * M + t]);
    // An empty split: every wave has m = -inf; skip the weights (exp2(-inf - -inf) would be NaN).
    float lb = 0.f, acc = 0.f;
    if (mb != kNegInf)
      for (int w = 0; w < kDecodeMmaWaves; ++w) {
        const float wgt = exp2f(part_m[w * M + t] - mb);
        lb += wgt * part_l[w * M + t];
        acc += wgt * part_o[(w * M + t) * D + dim];
      }
    const std::int64_t part = ((std::int64_t{b} * p.hq + head_of(t)) * p.sq + pos_of(t)) * splits + split;
    ws.o[part * p.dv + dim] = lb > 0.f ? acc / lb : 0.f;
    if (dim == 0) ws.lse[part] = lb > 0.f ? (mb + log2f(lb)) * kLn2 : kNegInf;
  }
}

}  // namespace flashprobe::kernels::dev
