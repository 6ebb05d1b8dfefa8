#pragma once
// ref3pass: attention as three plain kernels, the GPU correctness fallback for any shape and dtype.
//   1. qk:      S[row][j] = score(q_i . k_j) or -inf where masked    (row = (b*Hq + h)*Sq + i)
//   2. softmax: one block per row; S[row][:] becomes P = exp(S - max) / sum, LSE[row] = max + log(sum)
//   3. pv:      O[b, i, h, x] = sum_j P[row][j] * V[j][x]
// S lives in the f32 workspace. Every step is a direct transcription of the semantics: no tiling,
// nothing clever, so the other kernels can be debugged against it on the device.
#include "flashprobe/core/device.cuh"
#include "src/attn_common.cuh"
#include "src/dtype.cuh"

namespace flashprobe::kernels::dev {

inline constexpr int kRefQkThreads = 128;
inline constexpr int kRefSoftmaxMaxThreads = 256;
inline constexpr int kRefPvThreads = 128;

template <class E, Bug bug>
__global__ __launch_bounds__(kRefQkThreads) void ref_qk(Params p, float* S) {
  const int row = static_cast<int>(blockIdx.x);
  const std::int64_t j = std::int64_t{blockIdx.y} * blockDim.x + threadIdx.x;
  if (j >= p.sk) return;
  const int i = row % p.sq;
  const int h = (row / p.sq) % p.hq;
  const int b = row / (p.sq * p.hq);
  std::int64_t lo, hi;
  visible_range<bug>(p, b, i, lo, hi);
  float s = kNegInf;
  if (j >= lo && j <= hi) {
    const int hk = kv_head<bug>(p, h);
    float dot = 0.f;
    for (int x = 0; x < p.d; ++x)
      dot += load<E>(p.q, offset4(p.qs, b, i, h, x)) * load<E>(p.k, offset4(p.ks, b, j, hk, x));
    s = score(p, dot, h, i + diag_of<bug>(p, b), j);
  }
  S[std::int64_t{row} * p.sk + j] = s;
}

FP_DEV int next_pow2(int n) {
  int r = 1;
  while (r < n) r *= 2;
  return r;
}

// Block-wide reduction (max or sum) of one value per thread; every thread gets the result.
// The tree halves a power-of-two range, so the range is blockDim.x rounded UP to a power of two and
// the padding slots hold the identity (-inf for max, 0 for sum). Without the rounding, a block of 3
// threads reduces [0] with [1] and never looks at [2]: that bug shipped in a softmax whose block
// size followed the row length, and with 3 keys it dropped the newest token's score, so every
// generated token came out the same (the Bug::softmax_block_not_pow2 mutant).
template <Bug bug, class Op>
FP_DEV float block_reduce(float v, float identity, Op op, float* red) {
  const int t = static_cast<int>(threadIdx.x);
  const int n = static_cast<int>(blockDim.x);
  const int span = bug == Bug::softmax_block_not_pow2 ? n : next_pow2(n);
  red[t] = v;
  if (t + n < span) red[t + n] = identity;  // span < 2n, so threads [0, span - n) cover the padding
  fp_dev::barrier();
  for (int half = span / 2; half > 0; half /= 2) {
    if (t < half) red[t] = op(red[t], red[t + half]);
    fp_dev::barrier();
  }
  const float r = red[0];
  fp_dev::barrier();  // red is reused by the next reduction
  return r;
}

template <Bug bug>
__global__ __launch_bounds__(kRefSoftmaxMaxThreads) void ref_softmax(Params p, float* S) {
  __shared__ float red[2 * kRefSoftmaxMaxThreads];
  const int row = static_cast<int>(blockIdx.x);
  float* s = S + std::int64_t{row} * p.sk;
  const int t = static_cast<int>(threadIdx.x);
  float m = kNegInf;
  for (int j = t; j < p.sk; j += blockDim.x) m = fmaxf(m, s[j]);
  m = block_reduce<bug>(m, kNegInf, [](float a, float b) { return fmaxf(a, b); }, red);
  // An all-masked row has m = -inf and s - m would be NaN; its P is 0 and its LSE -inf.
  const float m_ref = softmax_ref(m);
  float l = 0.f;
  for (int j = t; j < p.sk; j += blockDim.x) l += expf(s[j] - m_ref);
  l = block_reduce<bug>(l, 0.f, [](float a, float b) { return a + b; }, red);
  const float inv = l > 0.f ? 1.f / l : 0.f;
  for (int j = t; j < p.sk; j += blockDim.x) s[j] = expf(s[j] - m_ref) * inv;
  if (t == 0) p.lse[row] = l > 0.f ? m + logf(l) : kNegInf;
}

template <class E, Bug bug>
__global__ __launch_bounds__(kRefPvThreads) void ref_pv(Params p, const float* P) {
  const int row = static_cast<int>(blockIdx.x);
  const int x = static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
  if (x >= p.dv) return;
  const int i = row % p.sq;
  const int h = (row / p.sq) % p.hq;
  const int b = row / (p.sq * p.hq);
  const int hk = kv_head<bug>(p, h);
  float acc = 0.f;
  const float* pr = P + std::int64_t{row} * p.sk;
  for (int j = 0; j < p.sk; ++j) {
    const float pj = pr[j];
    if (pj != 0.f) acc += pj * load<E>(p.v, offset4(p.vs, b, j, hk, x));
  }
  store<bug == Bug::bf16_truncate>(p.o, offset4(p.os, b, i, h, x), p.out_dtype, acc);
}

template <class E, Bug bug>
void ref3pass_enqueue(const Params& p, void* workspace, Stream stream) {
  auto* S = static_cast<float*>(workspace);
  const unsigned rows = static_cast<unsigned>(p.batch * p.hq * p.sq);
  if (p.sk > 0) {
    ref_qk<E, bug><<<dim3(rows, static_cast<unsigned>((p.sk + kRefQkThreads - 1) / kRefQkThreads)), kRefQkThreads, 0, stream>>>(p, S);
    FP_CHECK_LAUNCH("ref_qk");
  }
  // The block follows the row length (up to the cap): short rows get small, odd-sized blocks, which
  // is exactly the case the power-of-two rounding in block_reduce is there for.
  const int threads = p.sk < 1 ? 1 : (p.sk < kRefSoftmaxMaxThreads ? p.sk : kRefSoftmaxMaxThreads);
  ref_softmax<bug><<<rows, threads, 0, stream>>>(p, S);
  FP_CHECK_LAUNCH("ref_softmax");
  ref_pv<E, bug><<<dim3(rows, static_cast<unsigned>((p.dv + kRefPvThreads - 1) / kRefPvThreads)), kRefPvThreads, 0, stream>>>(p, S);
  FP_CHECK_LAUNCH("ref_pv");
}

}  // namespace flashprobe::kernels::dev

namespace flashprobe::kernels::detail {
template <Bug bug>
void launch_ref3pass(const Params& p, void* workspace, Stream s) {
  switch (p.dtype) {
    case DType::f16: dev::ref3pass_enqueue<dev::F16, bug>(p, workspace, s); break;
    case DType::bf16: dev::ref3pass_enqueue<dev::BF16, bug>(p, workspace, s); break;
    case DType::f32: dev::ref3pass_enqueue<dev::F32, bug>(p, workspace, s); break;
  }
}
}  // namespace flashprobe::kernels::detail
