#pragma once
// mma: FlashAttention-2 forward on the matrix unit, written once over an atom (probes' kernel-facing
// atoms, flashprobe/atoms/*.cuh). Porting to a new target means adding an atom, not editing this.
//
// One block per (query tile of kWaves * kMT * Atom::M rows, head, batch); each wave owns kMT m-tiles
// of Atom::M rows, each with its own rows, intervals and softmax state.
//   Q  -> NVIDIA: the block's Q tile in shared memory, A fragments read per k-step with ldmatrix.x4
//         (ldsm_feeds_a); generic path (AMD, kMT = 1): registers, in the atom's A layout (Atom::a)
//   K, V tiles of kBn keys -> shared memory/LDS, read into B fragments through Atom::b
//   S = Q K^T on the matrix unit: kBn / N accumulator tiles per m-tile, in the C layout (Atom::c)
//   online softmax on the accumulators: a row's max and sum combine exactly the lanes that
//     derive_c_rows<Atom>() says share that row (shuffle-xor over its lane bits), per local row
//   P = exp(S - m) converted to the input type and fed back as the A operand of O += P V: in
//     registers when derive_c_to_a<Atom>() proves every A slot of P lives in the same lane's C
//     fragment (NVIDIA mma.sync), else through a per-wave staging area in shared memory (AMD WMMA and
//     MFMA, whose C and A layouts are transposed across lanes)
//   O accumulators in the C layout; at the end O /= l and LSE = m + log(l) (natural log), empty
//     rows O = 0 and LSE = -inf.
// NVIDIA (when the compile-time derivations ldsm_feeds_b / ldsm_feeds_a say ldmatrix delivers the
// atom's B and A fragments, as it does for mma.sync m16n8k16): Q, K and V tiles stay row-major in
// dynamic shared memory, K/V two stages deep, filled by cp.async while the previous tile is computed;
// one ldmatrix.x4 per m-tile and k-step (Q), one ldmatrix.x4 (K) or .x4.trans (V) per two n-tiles,
// each B fragment feeding kMT = 2 mma (D <= 128; FlashAttention-2's 128-row tiles). Elsewhere (AMD):
// kMT = 1, one stage, V stored transposed so that B register pairs are single 32-bit loads.
// Masking: the key tiles outside the block's visible range [lo(first row), hi(last row)] are never
// loaded (causal/window early exit); inside, each score is masked against its own row's interval,
// which also covers the tail of the last tile (keys past keys(b) are zero-filled and masked).
// Row and key indices are 32-bit (visible_range32; the launcher bounds sq + sk).
// Head dims: D is the tile class (the width of every Q, K, V and O tile, compile time). In the
// classes of kMmaDimClasses the instantiation without Extras runs d = dv = D only; the Extras one
// (the general instantiation), and the one instantiation (without Extras) of the fine ladder's other
// classes (head_dim_classes.h), also take any d, dv <= D that are multiples of 8 (run time,
// Params::d and ::dv; d != dv too):
// the Q and K columns past d and the V columns past dv are loaded as zeros (never read from global
// memory), so S and the padded O columns are exact; k-steps of S and pairs of O tiles that lie
// wholly past d or dv are skipped; O stores stop at dv.
#include <climits>
#include <cstdint>
#include <type_traits>

#include "flashprobe/atoms/atom_layout.cuh"
#include "flashprobe/core/device.cuh"
#include "flashprobe/kernels/head_dim_classes.h"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"
#include "src/exp2_fma.h"
#include "src/mma/ldsm_imm.cuh"
#include "src/mma/mma_order.h"
#include "src/mma/mma_rescale.h"
#include "flashprobe/atoms/caps.h"
#include "flashprobe/atoms/sm75_ldmatrix.h"
#include "src/mma/async_copy.cuh"

namespace flashprobe::kernels::dev {

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
// and V ([key][dim] = B[k][n], k-major) tiles, and its A operand from the row-major Q tile.
template <class Atom>
constexpr bool use_ldsm() {
  return caps::kLdmatrix && atoms::ldsm_feeds_b<Atom, atoms::SM75_LDMATRIX_X4_Layout<false>, true>() &&
         atoms::ldsm_feeds_b<Atom, atoms::SM75_LDMATRIX_X4_Layout<true>, false>() &&
         atoms::ldsm_feeds_a<Atom, atoms::SM75_LDMATRIX_X4_Layout<false>>();
}

// m-tiles (Atom::M query rows each) per wave: 2 on the ldmatrix path up to D = 128, so that every K
// and V fragment read from shared memory feeds two mma instructions (FlashAttention-2's 32 rows per
// warp); 1 at D = 256 (2 x 32 O tiles x 4 floats would not fit 255 registers) and on the generic
// path (AMD), which keeps Q in registers and stages P per wave.
template <class Atom, int D>
constexpr int mma_default_mt() {
  return use_ldsm<Atom>() && D <= 128 ? 2 : 1;
}

template <class Atom, int D, int Waves, int Bn, int MT = 1>
struct MmaConfig {
  static constexpr int M = Atom::M, N = Atom::N, K = Atom::K;
  static constexpr int kWaves = Waves, kBn = Bn, kMT = MT;
  static constexpr int kWaveRows = MT * M;             // query rows per wave
  static constexpr int kBm = Waves * kWaveRows;        // query rows per block
  static constexpr int kThreads = Waves * Atom::kWave;
  static constexpr int kKT = D / K;                    // k-steps of S = Q K^T
  static constexpr int kNT = Bn / N;                   // S accumulator tiles per m-tile
  static constexpr int kPT = Bn / K;                   // k-steps of O += P V
  static constexpr int kOT = D / N;                    // O accumulator tiles per m-tile
  // Shared rows are padded by 8 elements (16 bytes) so that the lanes of a fragment load, which
  // walk down rows, do not all land in one bank.
  static constexpr bool kLdsm = use_ldsm<Atom>();
  // K and V tiles on the ldmatrix path with D a multiple of 64 (rows of 8 or more 16-byte chunks):
  // rows unpadded, chunk c of row r stored at chunk c ^ (r % 8) (an XOR swizzle). The 8 rows of an
  // ldmatrix 8x8 matrix land on 8 distinct chunk columns (no bank conflict), and every row starts
  // 128-byte aligned, so that a quarter-warp's 128 bytes of cp.async go to one aligned line (with
  // 16-byte padding most rows straddle two: 62 % of the copies' shared wavefronts were excess at
  // D = 128, Nsight Compute). Elsewhere, and for the Q tile, rows are padded by 8 elements (16
  // bytes), which also keeps ldmatrix conflict-free: Q is copied once per block, and its fragment
  // addresses are loop-invariant, so swizzled ones would be three more registers through the key
  // loop (hoisted by the compiler), which spilled at D = 128.
  static constexpr bool kSwz = kLdsm && D % 64 == 0;
  static constexpr int kLd = D + 8;               // padded rows: the Q tile, the generic path's K tile
  static constexpr int kKvLd = kSwz ? D : D + 8;  // K and V tiles [key][dim] on the ldmatrix path
  static constexpr int kVLd = Bn + 8;  // generic path: V tile stored transposed, [dim][key]: a B
                                       // fragment's register pairs run along k = key, one 32-bit load
  static constexpr int kPLd = Bn + 8;
  // Element offset of (row, col) in a tile, swizzled or padded; col % 8 == 0 for 16-byte chunks.
  template <bool Swz>
  FP_DEV static int at(int row, int col) {
    if constexpr (Swz) return row * D + ((((col >> 3) ^ row) & 7) | ((col >> 3) & ~7)) * 8 + (col & 7);
    else return row * kLd + col;
  }
  // A lane's ldmatrix row address: row `row`, chunk `bit` (0 or 1) of the first fragment step.
  template <bool Swz>
  FP_DEV static int lane_at(int row, int bit) {
    return at<Swz>(row, bit * 8);
  }
  // Fragment step S of such a lane address (the lane's chunk is 2 * S + bit): the register operand
  // (swizzled: the step's low chunk bits XORed in; tile bases are 128-byte aligned, so the lane's
  // chunk bits sit in address bits 4..6) and the immediate byte offset of the rest.
  template <bool Swz, int S>
  FP_DEV static std::uint32_t step_addr(std::uint32_t lane_addr) {
    if constexpr (Swz) return lane_addr ^ (32u * (S & 3));
    else return lane_addr;
  }
  template <bool Swz, int S>
  static constexpr int kStepImm = Swz ? 128 * (S >> 2) : 32 * S;
  // Dynamic shared memory of the ldmatrix path (16-bit elements): the block's Q tile, then two
  // stages of (K tile, V tile). D = 128: (128 * 136 + 4 * 64 * 128) * 2 B = 98 KB.
  static constexpr int kQElems = kLdsm ? kBm * kLd : 0;
  static constexpr int kStageElems = 2 * Bn * kKvLd;
  static constexpr int kDynSmemBytes = kLdsm ? (kQElems + 2 * kStageElems) * 2 : 0;
  static_assert(D % K == 0 && D % N == 0, "head dim must be a multiple of the atom's K and N");
  static_assert(Bn % N == 0 && Bn % K == 0, "key tile must be a multiple of the atom's N and K");
  static_assert(Atom::kA % 2 == 0 && Atom::kB % 2 == 0, "16-bit operands come in register pairs");
  static_assert(MT >= 1 && (MT == 1 || kLdsm), "several m-tiles per wave only on the ldmatrix path");
};

// A row-major tile of Rows rows copied in 16-byte chunks (kChunks per row) by Threads threads: rows
// are padded to a power of two of chunks (kCP; D = 80 and 96 leave 6 and 4 of 16 lanes idle), so that
// a thread's chunks all lie in one column, one row stride apart (the compiler keeps one address per
// thread instead of one per chunk). Chunk `it` of thread tid: its row, first column, and whether it
// is a real chunk.
template <int kChunks>
inline constexpr int kChunksPadded = kChunks <= 1 ? 1 : 2 * kChunksPadded<(kChunks + 1) / 2>;
template <int Rows, int kChunks, int Threads>
struct TileChunks {
  static constexpr int kCP = kChunksPadded<kChunks>;
  static_assert(Threads % kCP == 0 && Rows % (Threads / kCP) == 0, "whole chunk rows per pass");
  static constexpr int kIters = Rows / (Threads / kCP);
  static constexpr int kRowStep = Threads / kCP;  // rows between a thread's chunks
  FP_DEV static bool at(int tid, int it, int& row, int& col) {
    row = tid / kCP + it * kRowStep;
    col = (tid % kCP) * 8;
    return kCP == kChunks || tid % kCP < kChunks;
  }
  // Shared-memory element offset of chunk `it` of thread tid in a tile laid out by Cfg::at: the
  // first chunk's offset plus a constant per pass where the layout allows it (padded rows, or a
  // swizzle whose pattern repeats every 8 rows when a pass spans a multiple of 8 rows), so that
  // the compiler keeps one offset per thread, not one per chunk (those spilled at D = 128).
  template <class Cfg, bool Swz>
  FP_DEV static int smem_at(int tid, int it) {
    if constexpr (!Swz || kRowStep % 8 == 0) {
      return Cfg::template at<Swz>(tid / kCP, (tid % kCP) * 8) + it * kRowStep * (Swz ? Cfg::kKvLd : Cfg::kLd);
    } else {
      return Cfg::template at<Swz>(tid / kCP + it * kRowStep, (tid % kCP) * 8);
    }
  }
};


// Extras: soft-cap or ALiBi may be on (checked at run time); without, the kernel has no code for
// them (the launcher picks the instantiation), which keeps the score transform's temporaries out of
// the register allocation of the common case.
// PlainTail: run-time d and dv (below D) without Extras in a class of kMmaDimClasses (the variants
// mma/small=plain|fma, mma_small.h); FmaTiles: P of the first FmaTiles of a lane's kNT score tiles
// computed by exp2_fma on the FMA units instead of ex2 on the MUFU (mma/small=fma).
// The body, shared by the kernels mma_fwd and mma_fwd_occ below (which differ only in their launch
// bounds). It takes the parameters as each compiler keeps the code of the kernel with the body written
// inline, which it was (checked: mma_nvidia_d32.cu's SASS for sm_80 and sm_90 and mma_amd_check.cu's
// gfx1100 assembly identical): nvcc by reference (a copy reorders the parameter loads), clang's HIP by
// value (a reference turns the scalar kernel-argument loads into global ones).
#if defined(FP_VENDOR_HIP)
using MmaParamsIn = Params;
#else
using MmaParamsIn = const Params&;
#endif
template <class Atom, class E, int D, int Waves, int Bn, int MT, bool Extras, bool PlainTail, int FmaTiles>
FP_DEV void mma_fwd_body(MmaParamsIn p, MmaOrder order, float rescale_log2) {
  using C = MmaConfig<Atom, D, Waves, Bn, MT>;
  // Derived from the atom's layout at compile time (local constexpr copies: device code may not
  // odr-use host statics); indices into them are unrolled loop counters, so they fold away.
  constexpr atoms::CRows<Atom> kRows = atoms::derive_c_rows<Atom>();
  constexpr atoms::CToA<Atom> kC2A = atoms::derive_c_to_a<Atom>();
  static_assert(kRows.consistent, "every lane must group its C slots into rows the same way");
  constexpr int M = C::M, N = C::N, K = C::K, R = kRows.rows;
  constexpr bool kPInRegs = kC2A.in_place;
  static_assert(kPInRegs || MT == 1, "P staged through shared memory is laid out for one m-tile per wave");

  constexpr bool kAPairs = a_pairs_along_k<Atom>();
  constexpr bool kLdsm = C::kLdsm;
  // The conditional rescale (below) where it was measured: D = 128 (mma_lazy_rescale), without
  // soft-cap/ALiBi (the Extras instantiation, which is also the AMD path's only one, keeps the unconditional rescale).
  constexpr bool kLazy = mma_lazy_rescale<D>() && !Extras;
  // Head dims below the class (the header): run-time d and dv in the general instantiation of the
  // ldmatrix path (NVIDIA) and in the one instantiation of the fine ladder's other classes
  // (head_dim_classes.h, without Extras), the compile-time D elsewhere (the launcher sends every
  // d, dv != D to the former; AMD's registry takes d = dv = D only).
  constexpr bool kTail = (Extras || PlainTail || !mma_specialised_class(D)) && kLdsm;
  static_assert(FmaTiles == 0 || (!Extras && FmaTiles <= C::kNT), "exp2 on the FMA units: plain instantiations only");
  const int dq = kTail ? p.d : D, dvv = kTail ? p.dv : D;
  if constexpr (!kTail) {
    if (p.d != D || p.dv != D) fp_dev::trap();
  }
  static_assert(!kLdsm || (C::kNT % 2 == 0 && C::kOT % 2 == 0), "ldmatrix.x4 reads two n-tiles at a time");
  __shared__ __align__(16) std::uint16_t k_s[kLdsm ? 1 : Bn * C::kLd];
  __shared__ __align__(16) std::uint16_t vt_s[kLdsm ? 1 : D * C::kVLd];
  std::uint16_t* const dyn_s = fp_dev::dynamic_smem<std::uint16_t>();
  __shared__ std::uint16_t p_s[kPInRegs ? 1 : Waves * M * C::kPLd];

  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave;
  const int wave = static_cast<int>(threadIdx.x) / Atom::kWave;
  const int tid = static_cast<int>(threadIdx.x);
  // Which row block this block takes: heaviest first, in the order the launcher chose (mma_order.h).
  const MmaRowBlock rb = mma_row_block(order, blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y);
  const int h = rb.h, b = rb.b;
  const int hk = kv_head<Bug::none>(p, h);
  const int i0 = rb.m * C::kBm;                                           // block's first query row
  const int w0 = i0 + wave * C::kWaveRows;                                // wave's first query row
  const int keys = keys_of(p, b);
  const int diag = static_cast<int>(diag_of<Bug::none>(p, b));  // keys - sq or 0: fits (see above)
  const auto* qg = static_cast<const std::uint16_t*>(p.q);
  const auto* kg = static_cast<const std::uint16_t*>(p.k);
  const auto* vg = static_cast<const std::uint16_t*>(p.v);

  // Generic path: Q in registers, A layout (one m-tile); rows past Sq are zero (they see no key and
  // are never stored). The ldmatrix path keeps Q in shared memory instead (filled below).
  [[maybe_unused]] std::uint32_t qf[kLdsm ? 1 : C::kKT][Atom::kA / 2];
  if constexpr (!kLdsm) {
#pragma unroll
    for (int kk = 0; kk < C::kKT; ++kk)
#pragma unroll
      for (int r = 0; r < Atom::kA / 2; ++r) {
        std::uint16_t e[2];
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const atoms::Coord a = Atom::a(lane, 2 * r + u);
          const int i = w0 + a.row;
          const int x = kk * K + a.col;
          e[u] = i < p.sq && x < dq ? qg[offset4(p.qs, b, i, h, x)] : std::uint16_t{0};
        }
        qf[kk][r] = atoms::pack2(e[0], e[1]);
      }
  }

  // Per m-tile and local row: its query index (row_of), softmax state (max in base 2, this lane's
  // part of the sum). A row's visible keys are [max(0, i + lo_off), min(keys - 1, i + hi_off)]
  // (visible_offsets32), recomputed on each masked tile: kept per row, the 2 * MT * R bounds spilled
  // at D = 128 and were reloaded on every masked tile (PERF_NOTES.md). Rows past Sq get an interval as well:
  // they run on zero Q rows and are never stored.
  const auto row_of = [&](int mt, int rr) {
    return w0 + mt * M + Atom::c(lane, atoms::first_slot_of_row<Atom>(kRows, rr)).row;
  };
  int lo_off, hi_off;
  visible_offsets32(p, b, lo_off, hi_off);
  float m_r[MT][R], l_r[MT][R];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      m_r[mt][rr] = kNegInf;
      l_r[mt][rr] = 0.f;
    }
  // The block's key range: lo and hi are non-decreasing in the row, so the first and last valid
  // rows bound it.
  int blo = 1, bhi = 0;
  const int last = (i0 + C::kBm < p.sq ? i0 + C::kBm : p.sq) - 1;
  if (i0 <= last) {
    int t0, t1;
    visible_range32(p, b, i0, blo, t0);
    visible_range32(p, b, last, t1, bhi);
  }

  // The wave's rows (all MT m-tiles: w0 .. w0 + kWaveRows - 1) see keys [lo, hi] with both ends
  // non-decreasing in the row, so a tile inside [lo(last row), hi(first row)] is seen whole by every
  // row of the wave.
  // The hull [lo(first row), hi(last row)] bounds every key the wave sees: a tile outside it is
  // skipped by the whole wave (causal: the block's last key tile for the waves above the diagonal).
  // Only at D <= 64: at D = 128 the two bounds spill and the kernel ran 3.5 % slower everywhere
  // (PERF_NOTES.md, v7b); not where P is staged through shared memory, whose barrier is block-wide.
  constexpr bool kWaveSkip = kPInRegs && D <= 64;
  int wave_lo_max = INT_MAX, wave_hi_min = INT_MIN, wave_lo_min = INT_MAX, wave_hi_max = -1;
  if (w0 < p.sq) {
    const int wlast = (w0 + C::kWaveRows < p.sq ? w0 + C::kWaveRows : p.sq) - 1;
    visible_range32(p, b, wlast, wave_lo_max, wave_hi_max);
    visible_range32(p, b, w0, wave_lo_min, wave_hi_min);
    if (w0 + C::kWaveRows > p.sq) wave_lo_max = INT_MAX;  // rows past Sq see nothing: never a full tile
  }
  const bool extras = p.softcap > 0.f || p.alibi != nullptr;
  if constexpr (!Extras) {
    if (extras) fp_dev::trap();  // the launcher sends these problems to the Extras instantiation
  }
  // Scores stay unscaled until the exponent (FlashAttention-2's form): the row max is taken over raw
  // scores and exp2(s * f - m * f) is one FFMA and one ex2 per score. f = scale * log2(e); with
  // soft-cap or ALiBi on, the tile transform already yields log2-domain scores (score() * log2(e),
  // not monotonic in the raw score), and f = 1. Uniform over the launch, so every tile's m shares units.
  const float scale_log2 = p.scale * kLog2e;
  const float f_exp = Extras && extras ? 1.f : scale_log2;

  // Vectorised tile loads when every key row starts 16-byte aligned and its dims are contiguous
  // (any BSHD/BHSD tensor with D % 8 == 0; a fused QKV view too when its strides keep alignment).
  const std::int64_t k_row = b * p.ks.b + hk * p.ks.h, v_row = b * p.vs.b + hk * p.vs.h;
  // (Params::kv_rows16, decided on the host: a uniform parameter, not a register through the loop.)
  const bool vec = D % 8 == 0 && p.kv_rows16;

  float o[MT][C::kOT][Atom::kC];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
      for (int s = 0; s < Atom::kC; ++s) o[mt][ot][s] = 0.f;

  // ldmatrix path, dynamic shared memory: [Q tile kBm x kLd][stage 0: K, V][stage 1: K, V] (K, V kKvLd).
  [[maybe_unused]] std::uint16_t* const q_s = dyn_s;
  [[maybe_unused]] std::uint16_t* const kv_s = dyn_s + C::kQElems;
  // The block's Q tile, row-major, rows past Sq zero; asynchronously when its rows are aligned like
  // the K/V rows above. Issued before stage 0's copies, so it completes with stage 0's group.
  [[maybe_unused]] const auto fill_q = [&]() {
    const std::int64_t q_row = b * p.qs.b + h * p.qs.h;
    const bool qvec = D % 8 == 0 && p.q_rows16;
    if (qvec) {
      using T = TileChunks<C::kBm, D / 8, C::kThreads>;
#pragma unroll
      for (int it = 0; it < T::kIters; ++it) {
        int ii, x8;
        if (!T::at(tid, it, ii, x8)) continue;
        const int i = i0 + ii;
        const bool in = i < p.sq && x8 < dq;
        // rows past Sq and columns past d: zero-filled, row 0 column 0 (mapped) not read
        [[maybe_unused]] const std::int64_t ir = in ? i : 0, xr = in ? x8 : 0;
        if constexpr (caps::kAsyncCopy)
          cp_async16(&q_s[T::template smem_at<C, false>(tid, it)], qg + q_row + ir * p.qs.s + xr, in);
      }
    } else {
#pragma unroll 1
      for (int idx = tid; idx < C::kBm * D; idx += C::kThreads) {
        const int ii = idx / D, x = idx % D;
        const int i = i0 + ii;
        q_s[ii * C::kLd + x] = i < p.sq && x < dq ? qg[offset4(p.qs, b, i, h, x)] : std::uint16_t{0};
      }
    }
  };
  // Fills one stage (K and V row-major), asynchronously where the rows allow it.
  [[maybe_unused]] const auto fill_stage = [&](int stage, int kv0) {
    std::uint16_t* ks = kv_s + stage * C::kStageElems;
    std::uint16_t* vs = ks + Bn * C::kKvLd;
    if (vec) {
      using T = TileChunks<Bn, D / 8, C::kThreads>;
#pragma unroll
      for (int it = 0; it < T::kIters; ++it) {
        int jj, x8;
        if (!T::at(tid, it, jj, x8)) continue;
        const int j = kv0 + jj;
        // keys past the end and columns past d (K) or dv (V): zero-filled, nothing read
        const bool in_k = j < keys && x8 < dq, in_v = j < keys && x8 < dvv;
        [[maybe_unused]] const std::int64_t jk = in_k ? j : 0, xk = in_k ? x8 : 0;
        [[maybe_unused]] const std::int64_t jv = in_v ? j : 0, xv = in_v ? x8 : 0;
        if constexpr (caps::kAsyncCopy) {
          const int sm = T::template smem_at<C, C::kSwz>(tid, it);
          cp_async16(&ks[sm], kg + k_row + jk * p.ks.s + xk, in_k);
          cp_async16(&vs[sm], vg + v_row + jv * p.vs.s + xv, in_v);
        }
      }
    } else {
#pragma unroll 1
      for (int idx = tid; idx < Bn * D; idx += C::kThreads) {
        const int jj = idx / D, x = idx % D;
        const int j = kv0 + jj;
        const bool in = j < keys;
        ks[C::template at<C::kSwz>(jj, x)] = in && x < dq ? kg[offset4(p.ks, b, j, hk, x)] : std::uint16_t{0};
        vs[C::template at<C::kSwz>(jj, x)] = in && x < dvv ? vg[offset4(p.vs, b, j, hk, x)] : std::uint16_t{0};
      }
    }
    cp_async_commit();
  };
  // ldmatrix row addresses. B (ldsm_feeds_b): lane t addresses row t % 8 of matrix t / 8, which
  // holds k-block (t / 8) % 2 of n-tile t / 16: K tile row = key n, V tile row = key k. A
  // (ldsm_feeds_a): matrix t / 8 holds row-block (t / 8) % 2 and k-block t / 16 of the m-tile.
  [[maybe_unused]] const int k_lane = C::template lane_at<C::kSwz>((lane >> 4) * 8 + (lane & 7), (lane >> 3) & 1);
  [[maybe_unused]] const int v_lane = C::template lane_at<C::kSwz>(((lane >> 3) & 1) * 8 + (lane & 7), lane >> 4);
  [[maybe_unused]] const int q_lane =
      C::template lane_at<false>(wave * C::kWaveRows + ((lane >> 3) & 1) * 8 + (lane & 7), lane >> 4);
  [[maybe_unused]] const std::uint32_t q_addr = smem_u32(q_s) + 2 * q_lane;

  if constexpr (C::kSwz) {
    if (smem_u32(dyn_s) & 127) fp_dev::trap();  // the swizzled addressing needs 128-byte aligned tiles
  }
  const int kv_first = blo > 0 ? (blo / Bn) * Bn : 0;
  if constexpr (kLdsm) {
    if (blo <= bhi) {
      fill_q();
      fill_stage(0, kv_first);
    }
  }
  int stage = 0;
  for (int kv0 = kv_first; blo <= bhi && kv0 <= bhi; kv0 += Bn, stage ^= 1) {
    [[maybe_unused]] const std::uint16_t* ks = kv_s + stage * C::kStageElems;
    [[maybe_unused]] const std::uint16_t* vs = ks + Bn * C::kKvLd;
    if constexpr (kLdsm) {
      // Prefetch the next tile into the other stage (its readers finished at the end of the last
      // iteration), then wait for this tile's copies only (and, on the first tile, Q's).
      if (kv0 + Bn <= bhi) {
        fill_stage(stage ^ 1, kv0 + Bn);
        cp_async_wait<1>();
      } else {
        cp_async_wait<0>();
      }
      fp_dev::barrier();
    } else {
    fp_dev::barrier();  // the previous tile's readers are done before it is overwritten
    if (vec) {
      // 16-byte chunks: 8 consecutive dims of one key per thread and step.
      constexpr int kChunks = D / 8;
      for (int c = tid; c < Bn * kChunks; c += C::kThreads) {
        const int jj = c / kChunks, x8 = (c % kChunks) * 8;
        const int j = kv0 + jj;
        uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
        if (j < keys && x8 < dq) kv = *reinterpret_cast<const uint4*>(kg + k_row + j * p.ks.s + x8);
        if (j < keys && x8 < dvv) vv = *reinterpret_cast<const uint4*>(vg + v_row + j * p.vs.s + x8);
        *reinterpret_cast<uint4*>(&k_s[jj * C::kLd + x8]) = kv;
        const std::uint16_t* ve = reinterpret_cast<const std::uint16_t*>(&vv);
#pragma unroll
        for (int u = 0; u < 8; ++u) vt_s[(x8 + u) * C::kVLd + jj] = ve[u];
      }
    } else {
      for (int idx = tid; idx < Bn * D; idx += C::kThreads) {
        const int jj = idx / D, x = idx % D;
        const int j = kv0 + jj;
        const bool in = j < keys;
        k_s[jj * C::kLd + x] = in && x < dq ? kg[offset4(p.ks, b, j, hk, x)] : std::uint16_t{0};
        vt_s[x * C::kVLd + jj] = in && x < dvv ? vg[offset4(p.vs, b, j, hk, x)] : std::uint16_t{0};
      }
    }
    fp_dev::barrier();
    }

    // A wave skips a tile outside its hull (its state would not change) and only joins the barriers.
    if (!kWaveSkip || (kv0 <= wave_hi_max && kv0 + (Bn - 1) >= wave_lo_min)) {
      // S = Q K^T: B[k][n] = K[key n][dim k].
      float s[MT][C::kNT][Atom::kC];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) s[mt][nt][q] = 0.f;
      if constexpr (kLdsm) {
        // Per k-step: the A fragments of the wave's m-tiles (one ldmatrix.x4 each), then every K
        // fragment pair (one ldmatrix.x4) feeds 2 * MT mma. Offsets in bytes from the lane's row.
        const std::uint32_t k_addr = smem_u32(ks) + 2 * k_lane;
        static_for<C::kKT>([&](auto kk_) {
          constexpr int kk = decltype(kk_)::value;
          if (kTail && kk > 0 && kk * K >= dq) return;  // k-step wholly past d: zeros on both sides
          std::uint32_t qa[MT][Atom::kA / 2];
          static_for<MT>([&](auto mt_) {
            constexpr int mt = decltype(mt_)::value;
            ldsm_x4<false, 2 * mt * M * C::kLd + C::template kStepImm<false, kk>>(q_addr, qa[mt]);
          });
          static_for<C::kNT / 2>([&](auto np_) {
            constexpr int nt = 2 * decltype(np_)::value;
            std::uint32_t r[4];
            ldsm_x4<false, 2 * nt * N * C::kKvLd + C::template kStepImm<C::kSwz, kk>>(
                C::template step_addr<C::kSwz, kk>(k_addr), r);
            const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              Atom::mma(s[mt][nt], qa[mt], b0);
              Atom::mma(s[mt][nt + 1], qa[mt], b1);
            }
          });
        });
      } else {
#pragma unroll
        for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
          for (int kk = 0; kk < C::kKT; ++kk) {
            if (kTail && kk > 0 && kk * K >= dq) continue;
            std::uint32_t bf[Atom::kB / 2];
            load_b_nmajor<Atom>(bf, k_s, C::kLd, kk * K, nt * N, lane);
            Atom::mma(s[0][nt], qf[kk], bf);
          }
      }

      // Scores in base 2 (s * scale * log2(e), so that exp becomes one exp2), mask, and the new row
      // maxima (per lane, then across the lanes of each row). Two uniform fast paths: no soft-cap/ALiBi
      // (one multiply per score), and a tile every row of the wave sees whole (no mask compare).
      float mnew[MT][R];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int rr = 0; rr < R; ++rr) mnew[mt][rr] = m_r[mt][rr];
      // Masked tiles: key indices relative to the tile (jr = j - kv0, a compile-time constant per
      // score but for the lane's column). Written as kv0 + constant, every score's key index became a
      // loop induction variable of its own, live across the whole key loop (a first cut spilled
      // 1 KB at D = 128). The bounds move instead: per row and tile, lo - kv0 and hi - kv0 (both fit an
      // int: see visible_range32), and for ALiBi the distance |i + diag - j| = |(i + diag - kv0) - jr|.
      // Soft-cap/ALiBi is its own instantiation of this lambda and, on the ldmatrix path, of the
      // kernel (Extras), so its temporaries do not weigh on the plain path's register allocation.
      const auto mask_tile = [&](auto extras_) {
        constexpr bool kExtras = decltype(extras_)::value;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          int rlo[R], rhi[R];
          [[maybe_unused]] int rdiag[R];
#pragma unroll
          for (int rr = 0; rr < R; ++rr) {
            const int i = row_of(mt, rr);
            visible_from_offsets32(i, keys, lo_off, hi_off, rlo[rr], rhi[rr]);
            rlo[rr] -= kv0;
            rhi[rr] -= kv0;
            if constexpr (kExtras) rdiag[rr] = i + diag - kv0;
          }
#pragma unroll
          for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
            for (int q = 0; q < Atom::kC; ++q) {
              const int rr = kRows.local[q];
              const int jr = nt * N + Atom::c(lane, q).col;
              float v;
              if constexpr (kExtras) v = score(p, s[mt][nt][q], h, rdiag[rr], jr) * kLog2e;
              else v = s[mt][nt][q];
              if (jr < rlo[rr] || jr > rhi[rr]) v = kNegInf;
              s[mt][nt][q] = v;
              mnew[mt][rr] = fmaxf(mnew[mt][rr], v);
            }
        }
      };
      if (Extras && extras) {
        mask_tile(std::bool_constant<Extras>{});
      } else if (kv0 >= wave_lo_max && kv0 + (Bn - 1) <= wave_hi_min) {
        // A tile every row of the wave sees whole: no mask compare, raw scores.
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
            for (int q = 0; q < Atom::kC; ++q)
              mnew[mt][kRows.local[q]] = fmaxf(mnew[mt][kRows.local[q]], s[mt][nt][q]);
      } else {
        mask_tile(std::false_type{});
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int rr = 0; rr < R; ++rr)
#pragma unroll
          for (int bit = 1; bit < Atom::kWave; bit <<= 1)
            if (kRows.lane_mask & bit)
              mnew[mt][rr] = fmaxf(mnew[mt][rr], fp_dev::shfl_xor(mnew[mt][rr], bit, Atom::kWave));

      // Rescale what came before. Where kLazy (D = 128, mma_rescale.h) only when some row's max
      // grew by more than rescale_log2 (base-2 exponent units) since the max that the row's P, l and O
      // are relative to (FlashAttention-4's conditional rescaling): until then the row keeps its old
      // max, so its P values are at most 2^rescale_log2, and O and l stay consistent because both are
      // relative to the same kept max. The default threshold is -inf (every growth rescales, as
      // FlashAttention-2 does); the variant mma/rescale=lazy sets 8 (opt-in: mma_rescale.h says why;
      // measured on the H100 only). The choice is made per wave (a vote), so the rescale is a uniform
      // branch; each row's own test is the same on every lane that holds the row, so the vote is an
      // optimisation, not needed for consistency. A row whose max is still -inf has nothing to rescale:
      // softmax_ref (attn_common.cuh, the guard of tiled, decode and ref3pass too) makes its alpha
      // exp2(-inf) = 0 and its reference 0, so a fully masked tile gives no NaN; -inf - -inf is NaN and
      // never grows.
      // muse = the kept max times f, subtracted inside the FFMA below.
      bool rescale = true;
      if constexpr (kLazy) {
        bool grow = false;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int rr = 0; rr < R; ++rr) grow |= (mnew[mt][rr] - m_r[mt][rr]) * f_exp > rescale_log2;
        rescale = fp_dev::any(grow);
      }
      float muse[MT][R];
      if (rescale) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int rr = 0; rr < R; ++rr) {
            const float ref = softmax_ref(mnew[mt][rr]);
            const float alpha = exp2_ftz((m_r[mt][rr] - ref) * f_exp);  // 0 while the old max is -inf
            m_r[mt][rr] = mnew[mt][rr];
            if constexpr (!kLazy) muse[mt][rr] = ref * f_exp;
            l_r[mt][rr] *= alpha;
#pragma unroll
            for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
              for (int q = 0; q < Atom::kC; ++q)
                if (kRows.local[q] == rr) o[mt][ot][q] *= alpha;
          }
      }
      // (Computed after the rescale where it is conditional, inside it where it is not: each form is
      // the one without spills at its head dims, ptxas 13.0.)
      if constexpr (kLazy) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int rr = 0; rr < R; ++rr) muse[mt][rr] = softmax_ref(m_r[mt][rr]) * f_exp;
      }
      // P = exp(S - m); each lane sums its part of the row (combined across lanes once, at the end:
      // every lane of a row rescales by the same alpha, so partial sums stay consistent).
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) {
            const int rr = kRows.local[q];
            const float x = fmaf(s[mt][nt][q], f_exp, -muse[mt][rr]);
            const float pv = nt < FmaTiles ? exp2_fma(x) : exp2_ftz(x);
            s[mt][nt][q] = pv;
            l_r[mt][rr] += pv;
          }

      if constexpr (!kPInRegs) {
        // Stage P in the input type through shared memory: written in the C layout, read in the A
        // layout (one m-tile per wave, asserted above).
        std::uint16_t* pw = p_s + wave * M * C::kPLd;
#pragma unroll
        for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
          for (int q = 0; q < Atom::kC; ++q) {
            const atoms::Coord c = Atom::c(lane, q);
            pw[c.row * C::kPLd + nt * N + c.col] = to_bits<E>(s[0][nt][q]);
          }
        fp_dev::barrier();
      }

      // O += P V: A = P (rows x keys), B[k][n] = V[key k][dim n].
      // (static_for: the k-step is a compile-time constant, for the ldmatrix offsets)
      [[maybe_unused]] const std::uint32_t v_addr = smem_u32(vs) + 2 * v_lane;
      static_for<C::kPT>([&](auto pt_) {
        constexpr int pt = decltype(pt_)::value;
        std::uint32_t af[MT][Atom::kA / 2];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int r = 0; r < Atom::kA / 2; ++r) {
            if constexpr (kPInRegs) {
              constexpr int kTilesPerK = K / N;
              af[mt][r] = to_bits2<E>(s[mt][pt * kTilesPerK + kC2A.tile[2 * r]][kC2A.slot[2 * r]],
                                      s[mt][pt * kTilesPerK + kC2A.tile[2 * r + 1]][kC2A.slot[2 * r + 1]]);
            } else {
              const std::uint16_t* pw = p_s + wave * M * C::kPLd;
              const atoms::Coord a0 = Atom::a(lane, 2 * r);
              [[maybe_unused]] const atoms::Coord a1 = Atom::a(lane, 2 * r + 1);
              if constexpr (kAPairs)
                af[mt][r] = lds32(&pw[a0.row * C::kPLd + pt * K + a0.col]);
              else
                af[mt][r] =
                    atoms::pack2(pw[a0.row * C::kPLd + pt * K + a0.col], pw[a1.row * C::kPLd + pt * K + a1.col]);
            }
          }
        if constexpr (kLdsm) {
          // One ldmatrix.x4.trans per two O tiles, feeding 2 * MT mma.
          static_for<C::kOT / 2>([&](auto op_) {
            constexpr int ot = 2 * decltype(op_)::value;
            if (kTail && ot * N >= dvv) return;  // both O tiles wholly past dv: they stay zero
            std::uint32_t r[4];
            ldsm_x4<true, 2 * pt * K * C::kKvLd + C::template kStepImm<C::kSwz, ot / 2>>(
                C::template step_addr<C::kSwz, ot / 2>(v_addr), r);
            const std::uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              Atom::mma(o[mt][ot], af[mt], b0);
              Atom::mma(o[mt][ot + 1], af[mt], b1);
            }
          });
        } else {
#pragma unroll
          for (int ot = 0; ot < C::kOT; ++ot) {
            if (kTail && ot * N >= dvv) continue;
            std::uint32_t bf[Atom::kB / 2];
            load_b_nmajor<Atom>(bf, vt_s, C::kVLd, pt * K, ot * N, lane);
            Atom::mma(o[0][ot], af[0], bf);
          }
        }
      });
    }
    if constexpr (kLdsm) fp_dev::barrier();  // this stage is refilled two tiles from now
  }

  // Finish: combine the row sums across the row's lanes, normalize, store O and the LSE.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
#pragma unroll
      for (int bit = 1; bit < Atom::kWave; bit <<= 1)
        if (kRows.lane_mask & bit) l_r[mt][rr] += fp_dev::shfl_xor(l_r[mt][rr], bit, Atom::kWave);
  // O in the input type with 16-byte aligned contiguous rows (Params::o_rows16): each wave writes its
  // rows, rounded, over its own rows of the Q tile (only this wave read them, and its last read fed
  // the values it now writes), then copies them out in 16-byte chunks.
  const std::int64_t o_row = b * p.os.b + h * p.os.h;
  [[maybe_unused]] const bool o_vec = kLdsm && D % 8 == 0 && p.o_rows16;
  constexpr bool kOStage = kLdsm && atoms::c_pairs_along_n<Atom>();
  if (kOStage && o_vec) {
    if constexpr (kOStage) {
      const int wr0 = w0;  // the wave's first row
      std::uint16_t* const ow = q_s;
      const int r0 = (tid / Atom::kWave) * C::kWaveRows;  // the wave's first row in the Q tile
      fp_dev::syncwarp();
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
          for (int q = 0; q < Atom::kC; q += 2) {
            const atoms::Coord c = Atom::c(lane, q);
            const int rr = kRows.local[q];
            const float inv = inv_row_sum(l_r[mt][rr]);
            *reinterpret_cast<std::uint32_t*>(&ow[(r0 + mt * M + c.row) * C::kLd + ot * N + c.col]) =
                to_bits2<E>(o[mt][ot][q] * inv, o[mt][ot][q + 1] * inv);
          }
      fp_dev::syncwarp();
      constexpr int kChunks = D / 8;
      auto* const og = static_cast<std::uint16_t*>(p.o) + o_row;
#pragma unroll
      for (int it = 0; it < C::kWaveRows * kChunks / Atom::kWave; ++it) {
        const int c = it * Atom::kWave + lane, r = c / kChunks, x8 = (c % kChunks) * 8;
        const int i = wr0 + r;
        if (i < p.sq && x8 < dvv)
          *reinterpret_cast<uint4*>(og + static_cast<std::int64_t>(i) * p.os.s + x8) =
              *reinterpret_cast<const uint4*>(&ow[(r0 + r) * C::kLd + x8]);
      }
    }
  } else {
    // Element by element, in the output's type and strides.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int ot = 0; ot < C::kOT; ++ot)
#pragma unroll
        for (int q = 0; q < Atom::kC; ++q) {
          const int rr = kRows.local[q];
          if (row_of(mt, rr) >= p.sq) continue;
          const atoms::Coord c = Atom::c(lane, q);
          if (ot * N + c.col >= dvv) continue;  // padding columns past dv are never written
          const float inv = inv_row_sum(l_r[mt][rr]);
          store(p.o, offset4(p.os, b, row_of(mt, rr), h, ot * N + c.col), p.out_dtype, o[mt][ot][q] * inv);
        }
  }
  if ((lane & kRows.lane_mask) == 0) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int rr = 0; rr < R; ++rr)
        if (row_of(mt, rr) < p.sq)
          p.lse[(static_cast<std::int64_t>(b) * p.hq + h) * p.sq + row_of(mt, rr)] =
              l_r[mt][rr] > 0.f ? (m_r[mt][rr] * f_exp + log2f(l_r[mt][rr])) * kLn2 : kNegInf;
  }
}

template <class Atom, class E, int D, int Waves, int Bn, int MT = mma_default_mt<Atom, D>(), bool Extras = true,
          bool PlainTail = false, int FmaTiles = 0>
__global__ __launch_bounds__(Waves * Atom::kWave) void mma_fwd(Params p, MmaOrder order, float rescale_log2) {
  mma_fwd_body<Atom, E, D, Waves, Bn, MT, Extras, PlainTail, FmaTiles>(p, order, rescale_log2);
}

// The same code with a floor of MinBlocks resident blocks per SM in its launch bounds, so that ptxas
// caps the registers at 65536 / (MinBlocks * threads) and spills what does not fit (the variant
// mma/small=occ, mma_small.h: more warps per SM for the small head dims' latency-bound softmax).
template <class Atom, class E, int D, int Waves, int Bn, int MT, bool Extras, bool PlainTail, int MinBlocks>
__global__ FP_LAUNCH_BOUNDS(Waves * Atom::kWave, MinBlocks) void mma_fwd_occ(Params p, MmaOrder order, float rescale_log2) {
  mma_fwd_body<Atom, E, D, Waves, Bn, MT, Extras, PlainTail, 0>(p, order, rescale_log2);
}

}  // namespace flashprobe::kernels::dev
