// Subjects for `flashprobe gate`: one attention kernel, built once per planted bug (FP_BUG names the
// bug; CMake builds libfp_bug_<name>.so for each, plugin/subjects/CMakeLists.txt). Each bug is one a
// third-party author makes; the gate must fail every build but `none` (the control, which must pass:
// so a failure is the bug's, not the harness's). One thread per (batch, head, query row); keys in
// tiles of kTile, two passes (row max, then sum and P·V), as a first tiled kernel would be written.
// CUDA only: it uses cuda_fp16.h / cuda_bf16.h as a CUDA author would.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>

#include "flashprobe/core/mask.h"
#include "flashprobe/plugin/flashprobe_plugin.h"

#ifndef FP_BUG
#define FP_BUG none
#endif
#define FP_STR2(x) #x
#define FP_STR(x) FP_STR2(x)

namespace {

enum class Bug {
  none,                    // the control: correct
  causal_off_by_one,       // causal keeps j < diag: the diagonal key is masked
  causal_top_left_always,  // causal always aligned top-left (torch is_causal), also when bottom-right is asked
  scale_twice,             // scale applied to Q and again to the score
  scale_missing,           // scale never applied
  gqa_head_map,            // query head h reads kv head h % hkv instead of h / (hq / hkv)
  lse_log2,                // LSE left in base 2 (the exp2 domain many kernels compute in)
  lse_unwritten,           // LSE never written
  partial_tile_dropped,    // only whole key tiles: the last Sk % kTile keys of a row are skipped
  contiguous_only,         // ignores the strides: indexes Q, K, V, O as contiguous BSHD
  f16_accumulation,        // P·V and the row sum accumulated in f16
  empty_row_nan,           // a row that sees no key writes 0/0 = NaN instead of O = 0
};
constexpr Bug kBug = Bug::FP_BUG;

constexpr int kTile = 16;
constexpr int kMaxDv = 256;  // the per-thread accumulator

__device__ float load(const void* p, int64_t i, int dtype) {
  if (dtype == FP_DTYPE_F16) return __half2float(static_cast<const __half*>(p)[i]);
  if (dtype == FP_DTYPE_BF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

__device__ void store(void* p, int64_t i, int dtype, float v) {
  if (dtype == FP_DTYPE_F16) static_cast<__half*>(p)[i] = __float2half_rn(v);
  else if (dtype == FP_DTYPE_BF16) static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
  else static_cast<float*>(p)[i] = v;
}

// Element (b, s, h, x) of a [B, S, H, X] tensor.
__device__ int64_t at(const int64_t* st, int b, int64_t s, int h, int x, int64_t len, int heads, int dim) {
  if (kBug == Bug::contiguous_only) return ((b * len + s) * heads + h) * dim + x;
  return b * st[0] + s * st[1] + h * st[2] + x * st[3];
}

__device__ float acc_round(float x) { return kBug == Bug::f16_accumulation ? __half2float(__float2half_rn(x)) : x; }

struct Args {
  fp_problem_v1 p;
  fp_tensors_v1 t;
};

__global__ void attention(Args a) {
  namespace mask = flashprobe::mask;
  const fp_problem_v1& p = a.p;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= static_cast<int64_t>(p.batch) * p.hq * p.sq) return;
  const int i = static_cast<int>(row % p.sq), h = static_cast<int>((row / p.sq) % p.hq),
            b = static_cast<int>(row / (static_cast<int64_t>(p.sq) * p.hq));
  const int hk = kBug == Bug::gqa_head_map ? h % p.hkv : mask::kv_head(h, p.hq / p.hkv);
  const int64_t keys = a.t.seqlens_k ? a.t.seqlens_k[b] : p.sk;
  const bool top_left = p.causal == FP_CAUSAL_TOP_LEFT ||
                        (kBug == Bug::causal_top_left_always && p.causal == FP_CAUSAL_BOTTOM_RIGHT);
  const int64_t diag = i + mask::diag_offset(top_left, keys, p.sq);
  int64_t lo = 0, hi = keys - 1;
  mask::narrow(diag, p.causal != FP_CAUSAL_NONE, p.window_left, p.window_right, lo, hi);
  if (kBug == Bug::causal_off_by_one && p.causal != FP_CAUSAL_NONE && hi >= diag) hi = diag - 1;
  const int64_t n = hi >= lo ? hi - lo + 1 : 0;
  const int64_t tiles = kBug == Bug::partial_tile_dropped ? n / kTile : (n + kTile - 1) / kTile;

  const float scale = static_cast<float>(p.scale);
  auto score = [&](int64_t j) {
    float s = 0.f;
    for (int x = 0; x < p.d; ++x) {
      float q = load(a.t.q, at(p.q_strides, b, i, h, x, p.sq, p.hq, p.d), p.dtype);
      if (kBug == Bug::scale_twice) q *= scale;
      s += q * load(a.t.k, at(p.k_strides, b, j, hk, x, p.sk, p.hkv, p.d), p.dtype);
    }
    if (kBug != Bug::scale_missing) s *= scale;
    if (p.softcap > 0) s = static_cast<float>(p.softcap) * tanhf(s / static_cast<float>(p.softcap));
    if (a.t.alibi_slopes) s -= a.t.alibi_slopes[h] * fabsf(static_cast<float>(diag - j));
    return s;
  };
  // fmaxf skips a NaN score, whose exp makes the row NaN below; a row of -inf scores sees no key.
  float mx = -INFINITY;
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t j = lo + t * kTile; j < lo + (t + 1) * kTile && j <= hi; ++j) mx = fmaxf(mx, score(j));
  const float base = mx == -INFINITY ? 0.f : mx;
  float acc[kMaxDv];
  for (int x = 0; x < p.dv; ++x) acc[x] = 0.f;
  float sum = 0.f;
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t j = lo + t * kTile; j < lo + (t + 1) * kTile && j <= hi; ++j) {
      const float e = expf(score(j) - base);
      sum = acc_round(sum + e);
      for (int x = 0; x < p.dv; ++x)
        acc[x] = acc_round(acc[x] + e * load(a.t.v, at(p.v_strides, b, j, hk, x, p.sk, p.hkv, p.dv), p.dtype));
    }
  const bool none = sum == 0.f && kBug != Bug::empty_row_nan;  // NaN != 0: a NaN row stays NaN
  for (int x = 0; x < p.dv; ++x)
    store(a.t.o, at(p.o_strides, b, i, h, x, p.sq, p.hq, p.dv), p.out_dtype, none ? 0.f : acc[x] / sum);
  float lse = none ? -INFINITY : base + logf(sum);
  if (kBug == Bug::lse_log2) lse *= 1.4426950408889634f;
  if (kBug != Bug::lse_unwritten) a.t.lse[(static_cast<int64_t>(b) * p.hq + h) * p.sq + i] = lse;
}

int supports(const fp_problem_v1* p, char* why, size_t n) {
  if (p->dv <= kMaxDv) return 1;
  std::snprintf(why, n, "dv=%d: at most %d in this kernel", p->dv, kMaxDv);
  return 0;
}

int launch(const fp_problem_v1* p, const fp_tensors_v1* t, char* err, size_t n) {
  const int64_t rows = static_cast<int64_t>(p->batch) * p->hq * p->sq;
  if (rows == 0) return 0;
  Args a{*p, *t};
  a.p.alibi_slopes = nullptr;  // host pointers stay on the host; the device copies are in a.t
  a.p.seqlens_k = nullptr;
  const int block = 128;
  attention<<<static_cast<unsigned>((rows + block - 1) / block), block, 0, static_cast<cudaStream_t>(t->stream)>>>(a);
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return 0;
  std::snprintf(err, n, "attention launch: %s", cudaGetErrorString(e));
  return 1;
}

const fp_plugin_v1 kDescriptor = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_v1), "bug/" FP_STR(FP_BUG),
                                  "planted bug '" FP_STR(FP_BUG) "' (plugin/subjects/planted_bugs.cu)", supports,
                                  launch};
}  // namespace

extern "C" __attribute__((visibility("default"))) const fp_plugin_v1* flashprobe_plugin_v1(void) {
  return &kDescriptor;
}
