#pragma once
// decode: attention for a few query rows (Sq <= kDecodeMaxSq) over a long key range, the shape of a
// generation step. Too few rows to fill the GPU with one block per row, so the keys are split:
//   1. split kernel, grid (splits, Hq*Sq, B): block (s, row) runs the online softmax over keys
//      [s*chunk, (s+1)*chunk) ∩ visible(row) — each wave of the block takes every nwaves-th key, the
//      waves are merged through shared memory — and writes the partial (o_s normalised, lse_s).
//   2. combine kernel, one block per row: O = sum_s w_s o_s / sum_s w_s with w_s = exp(lse_s - max),
//      LSE = max + log(sum_s w_s).
// An empty split (no visible key) writes o_s = 0 and lse_s = -inf, so it has weight exp(-inf) = 0;
// if every split is empty the row gets O = 0 and LSE = -inf. Any split count works (1, odd, more
// splits than keys).
//
// Lanes own dims lane, lane + W, ... (W = the wave size), so K/V rows are read coalesced and the
// dot product is reduced over the full wave. D and Dv up to kDecodeMaxDim.
#include "flashprobe/core/device.cuh"
#include "flashprobe/kernels/registry.h"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"

namespace flashprobe::kernels::dev {

inline constexpr int kDecodeThreads = 128;
inline constexpr int kDecodeWaves = kDecodeThreads / fp_dev::kWaveSize;
inline constexpr int kDimsPerLane = kDecodeMaxDim / fp_dev::kWaveSize;
static_assert(kDecodeThreads % fp_dev::kWaveSize == 0, "whole waves per block");

// Workspace layout: partial o [rows][splits][dv] f32, then partial lse [rows][splits] f32.
struct DecodeWorkspace {
  float* o;
  float* lse;
};
inline DecodeWorkspace decode_workspace(const Params& p, int splits, void* ws) {
  auto* f = static_cast<float*>(ws);
  const std::int64_t parts = std::int64_t{p.batch} * p.hq * p.sq * splits;
  return {f, f + parts * p.dv};
}

template <class E, Bug bug>
__global__ __launch_bounds__(kDecodeThreads) void decode_split(Params p, int splits, int chunk, DecodeWorkspace ws) {
  __shared__ float part_m[kDecodeWaves], part_l[kDecodeWaves];
  __shared__ float part_o[kDecodeWaves][kDecodeMaxDim];
  const int split = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y) / p.sq;
  const int i = static_cast<int>(blockIdx.y) % p.sq;
  const int b = static_cast<int>(blockIdx.z);
  const int lane = fp_dev::lane_id(), wave = fp_dev::wave_id();
  const int hk = kv_head<bug>(p, h);

  std::int64_t lo, hi;
  visible_range<bug>(p, b, i, lo, hi);
  const std::int64_t s0 = std::int64_t{split} * chunk;
  const std::int64_t s1 = s0 + chunk - 1 < p.sk - 1 ? s0 + chunk - 1 : std::int64_t{p.sk} - 1;
  const std::int64_t jlo = lo > s0 ? lo : s0, jhi = hi < s1 ? hi : s1;
  const std::int64_t i_diag = i + diag_of<bug>(p, b);

  float q[kDimsPerLane], o[kDimsPerLane];
#pragma unroll
  for (int x = 0; x < kDimsPerLane; ++x) {
    const int dim = lane + x * fp_dev::kWaveSize;
    q[x] = dim < p.d ? load<E>(p.q, offset4(p.qs, b, i, h, dim)) : 0.f;
    o[x] = 0.f;
  }
  float m = kNegInf, l = 0.f;  // log2 units; the keys this wave saw
  for (std::int64_t j = jlo + wave; j <= jhi; j += kDecodeWaves) {
    float dot = 0.f;
#pragma unroll
    for (int x = 0; x < kDimsPerLane; ++x) {
      const int dim = lane + x * fp_dev::kWaveSize;
      if (dim < p.d) dot += q[x] * load<E>(p.k, offset4(p.ks, b, j, hk, dim));
    }
    for (int w = fp_dev::kWaveSize / 2; w > 0; w /= 2) dot += fp_dev::shfl_xor(dot, w);
    const float s = score(p, dot, h, i_diag, j) * kLog2e;  // j is visible: s is finite
    const float m_new = fmaxf(m, s);
    const float alpha = exp2f(m - m_new);  // 0 on the first key (m = -inf, m_new finite)
    const float pj = exp2f(s - m_new);
    l = l * alpha + pj;
#pragma unroll
    for (int x = 0; x < kDimsPerLane; ++x) {
      const int dim = lane + x * fp_dev::kWaveSize;
      o[x] = o[x] * alpha + (dim < p.dv ? pj * load<E>(p.v, offset4(p.vs, b, j, hk, dim)) : 0.f);
    }
    m = m_new;
  }
  // Merge the waves: the same LSE-weighted sum as the combine kernel, in shared memory.
#pragma unroll
  for (int x = 0; x < kDimsPerLane; ++x) {
    const int dim = lane + x * fp_dev::kWaveSize;
    if (dim < p.dv) part_o[wave][dim] = o[x];
  }
  if (lane == 0) {
    part_m[wave] = m;
    part_l[wave] = l;
  }
  fp_dev::barrier();
  float mb = kNegInf;
  for (int w = 0; w < kDecodeWaves; ++w) mb = fmaxf(mb, part_m[w]);
  // An empty split: every wave has m = -inf; skip the weights (exp2(-inf - -inf) would be NaN).
  float lb = 0.f;
  if (mb != kNegInf)
    for (int w = 0; w < kDecodeWaves; ++w) lb += exp2f(part_m[w] - mb) * part_l[w];
  const std::int64_t part = ((std::int64_t{b} * p.hq + h) * p.sq + i) * splits + split;
  for (int dim = static_cast<int>(threadIdx.x); dim < p.dv; dim += kDecodeThreads) {
    float acc = 0.f;
    if (mb != kNegInf)
      for (int w = 0; w < kDecodeWaves; ++w) acc += exp2f(part_m[w] - mb) * part_o[w][dim];
    ws.o[part * p.dv + dim] = lb > 0.f ? acc / lb : 0.f;
  }
  if (threadIdx.x == 0) ws.lse[part] = lb > 0.f ? (mb + log2f(lb)) * kLn2 : kNegInf;
}

inline constexpr int kCombineThreads = 128;

template <Bug bug>
__global__ __launch_bounds__(kCombineThreads) void decode_combine(Params p, int splits, DecodeWorkspace ws) {
  const std::int64_t row = blockIdx.x;  // (b * Hq + h) * Sq + i, the LSE index too
  const int i = static_cast<int>(row % p.sq);
  const int h = static_cast<int>((row / p.sq) % p.hq);
  const int b = static_cast<int>(row / (std::int64_t{p.sq} * p.hq));
  const float* lse = ws.lse + row * splits;
  float mx = kNegInf;
  for (int s = 0; s < splits; ++s) {
    // The mutant treats an empty split as the end of the row's keys; later splits are lost.
    if (bug == Bug::combine_skips_empty && lse[s] == kNegInf) break;
    mx = fmaxf(mx, lse[s]);
  }
  float sum = 0.f;
  if (mx != kNegInf)
    for (int s = 0; s < splits; ++s) {
      if (bug == Bug::combine_skips_empty && lse[s] == kNegInf) break;
      sum += expf(lse[s] - mx);  // an empty split adds exp(-inf) = 0
    }
  for (int x = static_cast<int>(threadIdx.x); x < p.dv; x += kCombineThreads) {
    float acc = 0.f;
    if (mx != kNegInf)
      for (int s = 0; s < splits; ++s) {
        if (bug == Bug::combine_skips_empty && lse[s] == kNegInf) break;
        acc += expf(lse[s] - mx) * ws.o[(row * splits + s) * p.dv + x];
      }
    store(p.o, offset4(p.os, b, i, h, x), p.out_dtype, sum > 0.f ? acc / sum : 0.f);
  }
  if (threadIdx.x == 0) p.lse[row] = sum > 0.f ? mx + logf(sum) : kNegInf;
}

inline int decode_chunk(int sk, int splits) {
  const int c = (sk + splits - 1) / splits;
  return c < 1 ? 1 : c;
}

}  // namespace flashprobe::kernels::dev

namespace flashprobe::kernels::detail {
template <Bug bug>
void launch_decode(const Params& p, int splits, void* workspace, Stream s) {
  const auto ws = dev::decode_workspace(p, splits, workspace);
  const int chunk = dev::decode_chunk(p.sk, splits);
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(p.hq * p.sq), static_cast<unsigned>(p.batch));
  if (p.dtype == DType::bf16) dev::decode_split<dev::BF16, bug><<<grid, dev::kDecodeThreads, 0, s>>>(p, splits, chunk, ws);
  else dev::decode_split<dev::F16, bug><<<grid, dev::kDecodeThreads, 0, s>>>(p, splits, chunk, ws);
  FP_CHECK_LAUNCH("decode_split");
  dev::decode_combine<bug><<<static_cast<unsigned>(p.batch * p.hq * p.sq), dev::kCombineThreads, 0, s>>>(p, splits, ws);
  FP_CHECK_LAUNCH("decode_combine");
}
}  // namespace flashprobe::kernels::detail
