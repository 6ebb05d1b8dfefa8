#pragma once
// decode/combine=wide|pdl (variants.h): the two-kernel decode's combine with its loads issued together.
// decode_combine (decode.cuh) walks the splits in three loops (their max, the weights' sum, then per
// dim the weighted partials), so at 8-16 splits a block waits on several chains of L2 round trips:
// Nsight put the kernel at 6 us beside a 12-17 us split kernel at batch 1 (DECODE_NOTES.md). Here a
// block loads every split's LSE at once (a thread per split), takes their max across the block, then
// loads kCombineBatch partials per dim at once before it sums them. The sums are decode_combine's, in
// the same order (split 0 first, one fused multiply-add per split), so the output is bitwise its output
// (GPU test DecodeCombine.WideGivesBitwiseTheLoopsOutput).
//
// With PDL (combine=pdl, sm_90) the combine is launched as a programmatic dependent of the split
// kernel: the split kernel's blocks allow it at their start (griddepcontrol.launch_dependents), the
// combine's blocks become resident once every split block has started, and wait in
// griddepcontrol.wait until the split kernel has finished and its writes are visible. So the launch
// gap between the two kernels is spent while the split kernel runs. Without a programmatic launch
// (other devices, HIP) both instructions are absent or have no effect and the stream orders the
// kernels as before.
#include "src/decode.cuh"

namespace flashprobe::kernels::dev {

inline constexpr int kCombineBatch = 16;  // partials per dim loaded before they are summed
static_assert(kDecodeMaxDim <= 2 * kCombineThreads, "a combine thread owns at most two dims");

// One block of kCombineThreads per row ((b * Hq + h) * Sq + i), as decode_combine.
__global__ __launch_bounds__(kCombineThreads) void decode_combine_wide(Params p, int splits, DecodeWorkspace ws) {
  __shared__ float wave_max[kCombineThreads / fp_dev::kWaveSize];
  __shared__ float weight[kCombineThreads];
  wait_for_prerequisite_grids();
  const std::int64_t row = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x), lane = fp_dev::lane_id(), wave = fp_dev::wave_id();
  const int i = static_cast<int>(row % p.sq);
  const int h = static_cast<int>((row / p.sq) % p.hq);
  const int b = static_cast<int>(row / (std::int64_t{p.sq} * p.hq));
  const float* lse = ws.lse + row * splits;

  // The largest LSE: a thread per split (the first kCombineThreads kept for the weights), then the
  // block's max. fmaxf is exact, so any order gives decode_combine's value (its NaN rule too: a NaN
  // loses to any number, and every thread starts from -inf).
  const float first = lse[t < splits ? t : splits - 1];
  float mx = t < splits ? first : kNegInf;
  for (int s = t + kCombineThreads; s < splits; s += kCombineThreads) mx = fmaxf(mx, lse[s]);
  for (int off = fp_dev::kWaveSize / 2; off > 0; off /= 2) mx = fmaxf(mx, fp_dev::shfl_xor(mx, off));
  if (lane == 0) wave_max[wave] = mx;
  fp_dev::barrier();
  mx = wave_max[0];
  for (int w = 1; w < kCombineThreads / fp_dev::kWaveSize; ++w) mx = fmaxf(mx, wave_max[w]);

  // This thread's dims: t and t + kCombineThreads (clamped into the row for the loads; stored only
  // when inside dv).
  const int x0 = t < p.dv ? t : p.dv - 1, x1 = t + kCombineThreads < p.dv ? t + kCombineThreads : p.dv - 1;
  float sum = 0.f, acc0 = 0.f, acc1 = 0.f;
  if (mx != kNegInf)  // block-uniform; every split empty: O = 0, LSE = -inf, as decode_combine
    for (int c0 = 0; c0 < splits; c0 += kCombineThreads) {
      const int n = splits - c0 < kCombineThreads ? splits - c0 : kCombineThreads;
      if (c0 > 0) fp_dev::barrier();  // the previous chunk's weights are read
      if (t < n) weight[t] = expf((c0 == 0 ? first : lse[c0 + t]) - mx);
      fp_dev::barrier();
      const float* o = ws.o + (row * splits + c0) * p.dv;
      for (int s0 = 0; s0 < n; s0 += kCombineBatch) {
        float v0[kCombineBatch], v1[kCombineBatch];
#pragma unroll
        for (int k = 0; k < kCombineBatch; ++k) {
          // Unconditional loads from inside the row's partials (past the chunk: its last split again, unused).
          const std::int64_t s = s0 + k < n ? s0 + k : n - 1;
          v0[k] = o[s * p.dv + x0];
          v1[k] = o[s * p.dv + x1];
        }
#pragma unroll
        for (int k = 0; k < kCombineBatch; ++k)
          if (s0 + k < n) {
            const float w = weight[s0 + k];
            sum += w;
            acc0 += w * v0[k];
            acc1 += w * v1[k];
          }
      }
    }
  if (t < p.dv) store(p.o, offset4(p.os, b, i, h, t), p.out_dtype, sum > 0.f ? acc0 / sum : 0.f);
  if (t + kCombineThreads < p.dv) store(p.o, offset4(p.os, b, i, h, t + kCombineThreads), p.out_dtype, sum > 0.f ? acc1 / sum : 0.f);
  if (t == 0) p.lse[row] = sum > 0.f ? mx + logf(sum) : kNegInf;
}

}  // namespace flashprobe::kernels::dev
