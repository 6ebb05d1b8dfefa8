#pragma once
// tiled_bwd and tiled_bwd_det (flashprobe/kernels/backward.h): FlashAttention-2's backward as scalar
// fp32 code, 128 threads per block, key blocks of kBwdKeys keys.
//   1. bwd_rowdot:  D_i = rowsum(dO ∘ O) in fp32, from the forward's O.
//   2. bwd_dkdv:    one block per (key block, kv head, batch). For every query row of every head of
//                   the group: the kBwdKeys scores from q·k and dP from dO·v (16 lanes per key, summed
//                   in a fixed order), P = exp(s - LSE), dS = P (dP - D) (1 - tanh² with soft-cap),
//                   both rounded to the input type; dV += P dO and dK += dS q in shared memory; in the fast
//                   mode, dQ_i += dS K added to an fp32 workspace with atomics.
//   3. fast: bwd_dq_convert writes dQ = scale * workspace rounded to the input type.
//      deterministic: bwd_dq, one block per query row, walks the key blocks in order (no atomics).
// Mutants change one line each via `bug` (Bug::bwd_*; bwd_dq_race two: its read and its write).
#include "flashprobe/core/device.cuh"
#include "flashprobe/kernels/backward.h"
#include "src/attn_common.cuh"
#include "src/bwd_params.h"
#include "src/dtype.cuh"

namespace flashprobe::kernels::dev {

inline constexpr int kBwdThreads = 128;
inline constexpr int kBwdKeys = 8;                          // keys per block of bwd_dkdv and per step of bwd_dq
inline constexpr int kBwdLanes = kBwdThreads / kBwdKeys;    // threads summing one key's dot products

// An element of a tensor of run-time type t, as f32.
FP_DEV float load_rt(const void* base, std::int64_t i, DType t) {
  if (t == DType::f32) return static_cast<const float*>(base)[i];
  const std::uint16_t bits = static_cast<const std::uint16_t*>(base)[i];
  return t == DType::f16 ? f16_to_f32(bits) : bf16_to_f32(bits);
}

// v rounded to the input type E (what a 16-bit tensor-core operand holds).
template <class E>
FP_DEV float round_in(float v) {
  if constexpr (E::kType == DType::f16) return f16_to_f32(f32_to_f16(v));
  else if constexpr (E::kType == DType::bf16) return bf16_to_f32(f32_to_bf16_rne(v));
  else return v;
}

// The keys row i may see in the backward (the causal bound dropped by the bwd_causal_missing mutant).
template <Bug bug>
FP_DEV void bwd_range(const Params& p, int b, int i, std::int64_t& lo, std::int64_t& hi) {
  if constexpr (bug == Bug::bwd_causal_missing) {
    const std::int64_t diag = i + diag_of<Bug::none>(p, b);
    lo = 0;
    hi = keys_of(p, b) - 1;
    if (p.window_left >= 0) lo = diag - p.window_left > lo ? diag - p.window_left : lo;
    if (p.window_right >= 0) hi = diag + p.window_right < hi ? diag + p.window_right : hi;
  } else {
    visible_range<Bug::none>(p, b, i, lo, hi);
  }
}

// The small kernels are templates on `bug` too, so that each translation unit (production, mutants)
// instantiates its own and none is defined twice.
template <Bug bug>
__global__ __launch_bounds__(kBwdThreads) void bwd_rowdot(BwdParams p) {
  const std::int64_t r = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;  // (b * hq + h) * sq + i
  const Params& f = p.f;
  if (r >= std::int64_t{f.batch} * f.hq * f.sq) return;
  const int i = static_cast<int>(r % f.sq), h = static_cast<int>((r / f.sq) % f.hq), b = static_cast<int>(r / (std::int64_t{f.sq} * f.hq));
  float s = 0.f;
  for (int x = 0; x < f.dv; ++x) {
    const std::int64_t o = offset4(f.os, b, i, h, x);
    s += load_rt(p.dout, o, f.out_dtype) * load_rt(f.o, o, f.out_dtype);
  }
  p.dvec[r] = s;
}

// Shared state of one (query row, key block) step.
struct BwdTile {
  float q[kBwdMaxDim], dout[kBwdMaxDim];                 // the query row and its dO
  float k[kBwdKeys][kBwdMaxDim], v[kBwdKeys][kBwdMaxDim];  // the key block
  float red_qk[kBwdThreads], red_dp[kBwdThreads];
  float p[kBwdKeys], ds[kBwdKeys];                       // P and dS rounded to the input type
};

// P and dS of row i (batch b, head h) against keys j0 .. j0 + kBwdKeys - 1 into t.p / t.ds (0 where
// the row does not see the key). Every thread calls it; t.q, t.dout, t.k, t.v are loaded and a
// barrier passed. Ends with a barrier.
template <class E, Bug bug>
FP_DEV void bwd_scores(const BwdParams& bp, BwdTile& t, int b, int h, int i, std::int64_t j0, std::int64_t lo,
                       std::int64_t hi) {
  const Params& p = bp.f;
  const int tid = static_cast<int>(threadIdx.x), key = tid / kBwdLanes, lane = tid % kBwdLanes;
  float qk = 0.f, dp = 0.f;
  for (int x = lane; x < p.d; x += kBwdLanes) qk += t.q[x] * t.k[key][x];
  for (int x = lane; x < p.dv; x += kBwdLanes) dp += t.dout[x] * t.v[key][x];
  t.red_qk[tid] = qk;
  t.red_dp[tid] = dp;
  fp_dev::barrier();
  if (tid < kBwdKeys) {
    const std::int64_t j = j0 + tid;
    float P = 0.f, dS = 0.f;
    if (j >= lo && j <= hi) {
      float s_qk = 0.f, s_dp = 0.f;
      for (int l = 0; l < kBwdLanes; ++l) {
        s_qk += t.red_qk[tid * kBwdLanes + l];
        s_dp += t.red_dp[tid * kBwdLanes + l];
      }
      float s = s_qk * p.scale, fac = 1.f;
      if (p.softcap > 0.f) {
        const float th = tanhf(s / p.softcap);
        s = p.softcap * th;
        if constexpr (bug != Bug::bwd_softcap_grad_missing) fac = 1.f - th * th;
      }
      if (p.alibi) {
        const std::int64_t diag = i + diag_of<Bug::none>(p, b);
        s -= p.alibi[h] * static_cast<float>(diag >= j ? diag - j : j - diag);
      }
      const std::int64_t r = (std::int64_t{b} * p.hq + h) * p.sq + i;
      P = expf(s - p.lse[r]);
      const float D = bp.dvec[r];
      if constexpr (bug == Bug::bwd_no_rowsum_d) dS = P * s_dp * fac;
      else dS = P * (s_dp - D) * fac;
    }
    t.p[tid] = round_in<E>(P);
    t.ds[tid] = round_in<E>(dS);
  }
  fp_dev::barrier();
}

// Row i's q and dO into the tile (f32).
template <class E>
FP_DEV void bwd_load_row(const BwdParams& bp, BwdTile& t, int b, int h, int i) {
  const Params& p = bp.f;
  for (int x = static_cast<int>(threadIdx.x); x < p.d; x += kBwdThreads) t.q[x] = load<E>(p.q, offset4(p.qs, b, i, h, x));
  for (int x = static_cast<int>(threadIdx.x); x < p.dv; x += kBwdThreads)
    t.dout[x] = load_rt(bp.dout, offset4(p.os, b, i, h, x), p.out_dtype);
}

// Keys j0 .. j0 + kBwdKeys - 1 of kv head kvh into the tile (zeros past the batch's keys).
template <class E>
FP_DEV void bwd_load_keys(const BwdParams& bp, BwdTile& t, int b, int kvh, std::int64_t j0, int keys) {
  const Params& p = bp.f;
  for (int e = static_cast<int>(threadIdx.x); e < kBwdKeys * p.d; e += kBwdThreads) {
    const int jj = e / p.d, x = e % p.d;
    t.k[jj][x] = j0 + jj < keys ? load<E>(p.k, offset4(p.ks, b, j0 + jj, kvh, x)) : 0.f;
  }
  for (int e = static_cast<int>(threadIdx.x); e < kBwdKeys * p.dv; e += kBwdThreads) {
    const int jj = e / p.dv, x = e % p.dv;
    t.v[jj][x] = j0 + jj < keys ? load<E>(p.v, offset4(p.vs, b, j0 + jj, kvh, x)) : 0.f;
  }
}

// dK and dV of one key block, accumulated in shared memory (each element owned by one thread: key
// tid / kBwdLanes, columns lane, lane + kBwdLanes, ...); registers would spill on RDNA.
struct BwdAcc {
  float dk[kBwdKeys][kBwdMaxDim], dv[kBwdKeys][kBwdMaxDim];
};

template <class E, Bug bug, bool kAtomicDq>
__global__ __launch_bounds__(kBwdThreads) void bwd_dkdv(BwdParams bp) {
  __shared__ BwdTile t;
  __shared__ BwdAcc acc;
  const Params& p = bp.f;
  const std::int64_t j0 = std::int64_t{blockIdx.x} * kBwdKeys;
  const int kvh = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int keys = keys_of(p, b);
  const int tid = static_cast<int>(threadIdx.x), key = tid / kBwdLanes, lane = tid % kBwdLanes;
  const int dmax = p.d > p.dv ? p.d : p.dv;
  auto clear = [&] {
    for (int x = lane; x < dmax; x += kBwdLanes) acc.dk[key][x] = acc.dv[key][x] = 0.f;
  };
  clear();
  if (j0 < keys) {
    bwd_load_keys<E>(bp, t, b, kvh, j0, keys);
    for (int hh = 0; hh < p.group; ++hh) {
      const int h = mask::q_head(kvh, hh, p.group);
      if constexpr (bug == Bug::bwd_gqa_unsummed) clear();
      for (int i = 0; i < p.sq; ++i) {
        std::int64_t lo, hi;
        bwd_range<bug>(p, b, i, lo, hi);
        if (lo > hi || hi < j0 || lo >= j0 + kBwdKeys) continue;  // the same for every thread
        fp_dev::barrier();  // the previous row's readers are done with t.q, t.dout, t.p, t.ds
        bwd_load_row<E>(bp, t, b, h, i);
        fp_dev::barrier();
        bwd_scores<E, bug>(bp, t, b, h, i, j0, lo, hi);
        const float pk = t.p[key], dsk = t.ds[key];
        for (int x = lane; x < p.dv; x += kBwdLanes) acc.dv[key][x] += pk * t.dout[x];
        for (int x = lane; x < p.d; x += kBwdLanes) acc.dk[key][x] += dsk * t.q[x];
        if constexpr (kAtomicDq) {
          for (int x = tid; x < p.d; x += kBwdThreads) {
            float* a = &bp.dq_acc[((std::int64_t{b} * p.sq + i) * p.hq + h) * p.d + x];
            const float before = bug == Bug::bwd_dq_race ? *static_cast<volatile float*>(a) : 0.f;
            float s = 0.f;
            for (int jj = 0; jj < kBwdKeys; ++jj) s += t.ds[jj] * t.k[jj][x];
            if constexpr (bug == Bug::bwd_dq_race) *static_cast<volatile float*>(a) = before + s;
            else atomicAdd(a, s);
          }
        }
      }
    }
  }
  const std::int64_t j = j0 + key;
  if (j >= p.sk) return;
  for (int x = lane; x < p.d; x += kBwdLanes) store(bp.dk, offset4(p.ks, b, j, kvh, x), p.dtype, acc.dk[key][x] * p.scale);
  for (int x = lane; x < p.dv; x += kBwdLanes) store(bp.dv, offset4(p.vs, b, j, kvh, x), p.dtype, acc.dv[key][x]);
}

template <Bug bug>
__global__ __launch_bounds__(kBwdThreads) void bwd_zero(float* a, std::int64_t n) {
  const std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (e < n) a[e] = 0.f;
}

template <Bug bug>
__global__ __launch_bounds__(kBwdThreads) void bwd_dq_convert(BwdParams bp) {
  const Params& p = bp.f;
  const std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;  // ((b * sq + i) * hq + h) * d + x
  if (e >= std::int64_t{p.batch} * p.sq * p.hq * p.d) return;
  const int x = static_cast<int>(e % p.d), h = static_cast<int>((e / p.d) % p.hq);
  const int i = static_cast<int>((e / (std::int64_t{p.d} * p.hq)) % p.sq);
  const int b = static_cast<int>(e / (std::int64_t{p.d} * p.hq * p.sq));
  store(bp.dq, offset4(p.qs, b, i, h, x), p.dtype, bp.dq_acc[e] * p.scale);
}

// Deterministic dQ: one block per (query row, head, batch), key blocks in increasing order.
template <class E, Bug bug>
__global__ __launch_bounds__(kBwdThreads) void bwd_dq(BwdParams bp) {
  __shared__ BwdTile t;
  const Params& p = bp.f;
  const int i = static_cast<int>(blockIdx.x), h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int kvh = mask::kv_head(h, p.group), keys = keys_of(p, b);
  constexpr int kCols = kBwdMaxDim / kBwdThreads;
  float acc[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) acc[c] = 0.f;
  std::int64_t lo, hi;
  bwd_range<bug>(p, b, i, lo, hi);
  if (lo <= hi) {
    bwd_load_row<E>(bp, t, b, h, i);
    for (std::int64_t j0 = lo / kBwdKeys * kBwdKeys; j0 <= hi; j0 += kBwdKeys) {
      fp_dev::barrier();  // the previous block's readers are done with t.k, t.v
      bwd_load_keys<E>(bp, t, b, kvh, j0, keys);
      fp_dev::barrier();
      bwd_scores<E, bug>(bp, t, b, h, i, j0, lo, hi);
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const int x = static_cast<int>(threadIdx.x) + c * kBwdThreads;
        if (x >= p.d) continue;
        float s = 0.f;
#pragma unroll
        for (int jj = 0; jj < kBwdKeys; ++jj) s += t.ds[jj] * t.k[jj][x];
        acc[c] += s;
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    const int x = static_cast<int>(threadIdx.x) + c * kBwdThreads;
    if (x < p.d) store(bp.dq, offset4(p.qs, b, i, h, x), p.dtype, acc[c] * p.scale);
  }
}

template <class E, Bug bug>
void bwd_enqueue(const BwdParams& bp, bool deterministic, Stream s) {
  const Params& p = bp.f;
  const std::int64_t rows = std::int64_t{p.batch} * p.hq * p.sq;
  const auto blocks = [](std::int64_t n) { return static_cast<unsigned>((n + kBwdThreads - 1) / kBwdThreads); };
  if (rows > 0) {
    bwd_rowdot<bug><<<blocks(rows), kBwdThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("bwd_rowdot");
  }
  const std::int64_t nq = rows * p.d;
  if (!deterministic && nq > 0) {
    bwd_zero<bug><<<blocks(nq), kBwdThreads, 0, s>>>(bp.dq_acc, nq);
    FP_CHECK_LAUNCH("bwd_zero");
  }
  if (p.sk > 0) {
    const dim3 grid(static_cast<unsigned>((p.sk + kBwdKeys - 1) / kBwdKeys), static_cast<unsigned>(p.hkv),
                    static_cast<unsigned>(p.batch));
    if (deterministic) bwd_dkdv<E, bug, false><<<grid, kBwdThreads, 0, s>>>(bp);
    else bwd_dkdv<E, bug, true><<<grid, kBwdThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("bwd_dkdv");
  }
  if (nq == 0) return;
  if (deterministic) {
    bwd_dq<E, bug><<<dim3(static_cast<unsigned>(p.sq), static_cast<unsigned>(p.hq), static_cast<unsigned>(p.batch)),
                     kBwdThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("bwd_dq");
  } else {
    bwd_dq_convert<bug><<<blocks(nq), kBwdThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("bwd_dq_convert");
  }
}

}  // namespace flashprobe::kernels::dev

namespace flashprobe::kernels::detail {
template <Bug bug>
void launch_backward(const BwdParams& p, bool deterministic, Stream s) {
  switch (p.f.dtype) {
    case DType::f16: dev::bwd_enqueue<dev::F16, bug>(p, deterministic, s); break;
    case DType::bf16: dev::bwd_enqueue<dev::BF16, bug>(p, deterministic, s); break;
    case DType::f32: dev::bwd_enqueue<dev::F32, bug>(p, deterministic, s); break;
  }
}
}  // namespace flashprobe::kernels::detail
