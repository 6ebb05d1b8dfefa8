#pragma once
// tiled: scalar FlashAttention-2 forward. One block per (query tile of kBm rows, head, batch); K/V
// tiles of kBn keys pass through shared memory/LDS (converted to f32 once, on the way in); the
// online-softmax state (running max m, row sum l, output accumulator o) stays in registers; the
// tile's scores pass through shared memory; S and P never touch global memory.
//
// Thread layout: kTpr consecutive threads share one query row, thread c of the row owning dims
// c, c + kTpr, c + 2*kTpr, ... (kDpt = D / kTpr of them). A row's dot product is kDpt FMAs per thread
// plus a shuffle-xor reduction of width kTpr; kTpr is a power of two that divides every wave size
// (32 and 64), so a row never straddles waves and the code is the same in wave32 and wave64.
// The interleaved ownership makes a row's kTpr threads read kTpr consecutive shared words (no bank
// conflicts), while the rows of a wave read the same key row (a broadcast).
//
// Masking: the block's key range is [lo(first row), hi(last row)] (both ends are non-decreasing in
// the row index), so tiles outside it are never loaded (the causal / window early exit); inside it
// each score is masked against its own row's interval, which also masks the tail of the last tile
// (keys past keys(b) are zero-filled in shared memory and masked).
#include "flashprobe/core/device.cuh"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"

namespace flashprobe::kernels::dev {

// Tile sizes per head dim. All give 256 threads (8 waves of 32, 4 of 64) and at most 40 KB of
// static shared memory (two f32 tiles kBn x D plus the kBm x kBn scores), under the 48 KB every
// CUDA and AMD target gives without opt-in. Registers per thread: the q and o slices (2 * kDpt,
// kDpt <= 16) plus a few scalars: no spills at D = 256 on sm_80/sm_90/gfx90a/gfx1100.
template <int D>
struct TiledConfig;
template <>
struct TiledConfig<64> {  // 4 threads per row: 16 dims each; 64 rows share each K/V tile
  static constexpr int kTpr = 4, kBm = 64, kBn = 32;
};
template <>
struct TiledConfig<80> {  // 80 = 8 x 10: not a power of two, so 8 threads x 10 dims
  static constexpr int kTpr = 8, kBm = 32, kBn = 32;
};
template <>
struct TiledConfig<96> {  // 8 x 12
  static constexpr int kTpr = 8, kBm = 32, kBn = 32;
};
template <>
struct TiledConfig<128> {  // 8 x 16
  static constexpr int kTpr = 8, kBm = 32, kBn = 32;
};
template <>
struct TiledConfig<256> {  // 16 x 16; kBn halves to keep the two f32 tiles at 32 KB
  static constexpr int kTpr = 16, kBm = 16, kBn = 16;
};

template <int D>
struct Tiled : TiledConfig<D> {
  using Cfg = TiledConfig<D>;
  static constexpr int kDpt = D / Cfg::kTpr;
  static constexpr int kThreads = Cfg::kBm * Cfg::kTpr;
  static constexpr int kTileElems = Cfg::kBn * D;
  static_assert(D % Cfg::kTpr == 0, "each thread of a row owns the same number of dims");
  static_assert((Cfg::kTpr & (Cfg::kTpr - 1)) == 0 && Cfg::kTpr <= 32,
                "a row's threads must be a power of two that divides the wave (32 or 64)");
  static_assert(kThreads == 256, "__launch_bounds__ below assumes 256 threads");
  static_assert((2 * kTileElems + Cfg::kBm * Cfg::kBn) * 4 <= 40 * 1024, "K, V and score tiles must fit in 40 KB");
};
inline constexpr int kTiledThreads = 256;

template <int D, class E, Bug bug>
__global__ __launch_bounds__(kTiledThreads) void tiled_fwd(Params p) {
  using T = Tiled<D>;
  constexpr int kTpr = T::kTpr, kBm = T::kBm, kBn = T::kBn, kDpt = T::kDpt;
  __shared__ float k_tile[T::kTileElems];
  __shared__ float v_tile[T::kTileElems];
  __shared__ float s_tile[kBm * kBn];

  const int tid = static_cast<int>(threadIdx.x);
  const int r = tid / kTpr;  // row within the tile
  const int c = tid % kTpr;  // this thread's dims: c + x * kTpr
  const int tile = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const int b = static_cast<int>(blockIdx.z);
  const int i = tile * kBm + r;
  // Rows past Sq still run the loop (they take part in barriers and shuffles) but see no key.
  const bool row_ok = i < p.sq;
  const int hk = kv_head<bug>(p, h);
  const int keys = keys_of(p, b);
  // Element offsets. The 32-bit mutant keeps them in 31 bits (a signed 32-bit index that wraps past
  // 2^31 elements), masked back inside the tensor so that it reads wrong rows instead of faulting.
  const auto at = [](std::int64_t off) {
    if constexpr (bug == Bug::offset_32bit) return off & 0x7fffffff;
    else return off;
  };
  // The V-strides mutant addresses V with K's strides, clamped to V's extent (no fault, wrong rows).
  const DevStrides& vs = bug == Bug::v_reads_k_strides ? p.ks : p.vs;
  const auto v_at = [&p](std::int64_t off) {
    if constexpr (bug == Bug::v_reads_k_strides) {
      const std::int64_t last = (p.batch - 1) * p.vs.b + (std::int64_t{p.sk} - 1) * p.vs.s + (p.hkv - 1) * p.vs.h + (p.dv - 1) * p.vs.d;
      return off < last ? off : last;
    } else {
      return off;
    }
  };

  std::int64_t lo = 0, hi = -1;
  if (row_ok) visible_range<bug>(p, b, i, lo, hi, /*cap_at_keys=*/bug != Bug::tail_unmasked);
  const std::int64_t i_diag = i + diag_of<bug>(p, b);

  // The block's key range: tiles outside it are masked for every row (early exit).
  const int last_row = (tile + 1) * kBm <= p.sq ? (tile + 1) * kBm - 1 : p.sq - 1;
  std::int64_t blo, bhi, unused;
  visible_range<bug>(p, b, tile * kBm, blo, unused);
  visible_range<bug>(p, b, last_row, unused, bhi);

  float q[kDpt], o[kDpt];
#pragma unroll
  for (int x = 0; x < kDpt; ++x) {
    q[x] = row_ok ? load<E>(p.q, at(offset4(p.qs, b, i, h, c + x * kTpr))) : 0.f;
    o[x] = 0.f;
  }
  float m = kNegInf;  // running max, in log2 units
  float l = 0.f;      // running row sum of exp2(s - m)

  for (std::int64_t j0 = blo < 0 ? 0 : blo / kBn * kBn; j0 <= bhi; j0 += kBn) {
    // Cooperative load of the K and V tiles; keys past keys(b) are zero-filled (never read from
    // global memory: they may lie past the end of the tensor) and masked below.
    for (int e = tid; e < T::kTileElems; e += kTiledThreads) {
      const int jj = e / D, x = e % D;
      const std::int64_t j = j0 + jj;
      const bool in = j < keys;
      k_tile[e] = in ? load<E>(p.k, at(offset4(p.ks, b, j, hk, x))) : 0.f;
      v_tile[e] = in ? load<E>(p.v, at(v_at(offset4(vs, b, j, hk, x)))) : 0.f;
    }
    if constexpr (bug != Bug::missing_barrier) fp_dev::barrier();  // tile written -> tile read

    // Scores of the tile, one row per query row, through shared memory: keeping kBn scores per
    // thread in registers made AMD's scheduler hoist every LDS read of the P.V loop (gfx1100
    // spilled, gfx90a used 338 VGPRs); from shared memory neither key loop needs full unrolling.
    float m_tile = kNegInf;
#pragma unroll 4
    for (int jj = 0; jj < kBn; ++jj) {
      float dot = 0.f;
#pragma unroll
      for (int x = 0; x < kDpt; ++x) dot += q[x] * k_tile[jj * D + c + x * kTpr];
      // Butterfly over the row's kTpr threads: every thread ends with the same (bitwise) sum.
#pragma unroll
      for (int w = kTpr / 2; w > 0; w /= 2) dot += fp_dev::shfl_xor(dot, w, kTpr);
      const std::int64_t j = j0 + jj;
      const float sj = (j >= lo && j <= hi) ? score(p, dot, h, i_diag, j) * kLog2e : kNegInf;
      m_tile = fmaxf(m_tile, sj);
      if (c == 0) s_tile[r * kBn + jj] = sj;
    }
    const float m_new = fmaxf(m, m_tile);
    // A row that has seen no visible key yet has m_new = -inf, and exp2(-inf - -inf) is NaN. With
    // 0 as the reference every term is exp2(-inf) = 0 and the state stays (m, l, o) = (-inf, 0, 0).
    const float m_ref = bug == Bug::masked_row_nan ? m_new : softmax_ref(m_new);
    const float alpha = exp2f(m - m_ref);
    l *= alpha;
#pragma unroll
    for (int x = 0; x < kDpt; ++x) o[x] *= alpha;
    // Scores written -> scores read. A row's threads share a wave, but CUDA's independent thread
    // scheduling orders nothing inside a warp without a sync; the block barrier is the portable one.
    fp_dev::barrier();
#pragma unroll 4
    for (int jj = 0; jj < kBn; ++jj) {
      const float pj = exp2f(s_tile[r * kBn + jj] - m_ref);
      if constexpr (bug == Bug::rowsum_f16) l = round_f16(l + pj);
      else l += pj;
#pragma unroll
      for (int x = 0; x < kDpt; ++x) o[x] += pj * v_tile[jj * D + c + x * kTpr];
    }
    if constexpr (bug == Bug::o_accum_f16)
#pragma unroll
      for (int x = 0; x < kDpt; ++x) o[x] = round_f16(o[x]);
    m = m_new;
    fp_dev::barrier();  // tile read -> next tile written
  }

  if (!row_ok) return;
  // l == 0: the row saw no key: O = 0, LSE = -inf (docs/attention-semantics.md).
  const float inv = l == 0.f ? 0.f : 1.f / l;
#pragma unroll
  for (int x = 0; x < kDpt; ++x) store(p.o, at(offset4(p.os, b, i, h, c + x * kTpr)), p.out_dtype, o[x] * inv);
  if (c == 0) {
    float lse = kNegInf;
    if (l != 0.f) lse = (bug == Bug::lse_scale_twice ? (m * p.scale + log2f(l)) : (m + log2f(l))) * kLn2;
    p.lse[(std::int64_t{b} * p.hq + h) * p.sq + i] = lse;
  }
}

}  // namespace flashprobe::kernels::dev

namespace flashprobe::kernels::detail {
template <Bug bug, int D>
void launch_tiled(const Params& p, Stream s) {
  using T = dev::Tiled<D>;
  const dim3 grid(static_cast<unsigned>((p.sq + T::kBm - 1) / T::kBm), static_cast<unsigned>(p.hq),
                  static_cast<unsigned>(p.batch));
  if (p.dtype == DType::bf16) dev::tiled_fwd<D, dev::BF16, bug><<<grid, dev::kTiledThreads, 0, s>>>(p);
  else dev::tiled_fwd<D, dev::F16, bug><<<grid, dev::kTiledThreads, 0, s>>>(p);
  FP_CHECK_LAUNCH("tiled_fwd");
}
}  // namespace flashprobe::kernels::detail
