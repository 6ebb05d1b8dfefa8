// An example external kernel, loaded through the plug-in ABI: one thread per (batch, head, query row),
// scores recomputed in two passes (max, then sum and P·V). Deliberately simple, so that a user sees
// the whole contract in one file; it refuses the features it does not implement, naming each.
// It depends only on flashprobe_plugin.h and the vendor runtime (the shim header is used for the
// CUDA/HIP spelling of the stream type).
#include <cmath>
#include <cstdio>
#include <cstring>

#include "flashprobe/core/vendor.h"
#include "flashprobe/plugin/flashprobe_plugin.h"

namespace {

constexpr int kMaxDv = 256;  // the per-thread output accumulator lives in registers/local memory

__device__ float load(const void* p, int64_t i, int dtype) {
  if (dtype == FP_DTYPE_F32) return static_cast<const float*>(p)[i];
  const uint32_t h = static_cast<const uint16_t*>(p)[i];
  if (dtype == FP_DTYPE_BF16) return __uint_as_float(h << 16);
  // IEEE half -> float by bits (subnormals scaled exactly).
  const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 0) return (sign ? -1.0f : 1.0f) * ldexpf(static_cast<float>(m), -24);
  if (e == 31) return __uint_as_float(sign | 0x7F800000u | (m << 13));
  return __uint_as_float(sign | ((e + 112) << 23) | (m << 13));
}

__device__ void store(void* p, int64_t i, int dtype, float v) {
  if (dtype == FP_DTYPE_F32) { static_cast<float*>(p)[i] = v; return; }
  uint32_t u = __float_as_uint(v);
  if (dtype == FP_DTYPE_BF16) {
    u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even (finite inputs)
    static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(u >> 16);
    return;
  }
  // float -> half, round to nearest even, via the exact float arithmetic trick for normals/subnormals.
  const uint32_t sign = (u >> 16) & 0x8000u;
  float a = fabsf(v);
  uint16_t h;
  if (!(a == a)) h = 0x7E00;
  else if (a >= 65520.0f) h = 0x7C00;
  else if (a < 6.103515625e-05f) h = static_cast<uint16_t>(rintf(a * 16777216.0f));  // subnormal: units of 2^-24
  else {
    const int e = ilogbf(a);
    const float q = rintf(ldexpf(a, 10 - e));  // 1024..2048
    uint32_t mant = static_cast<uint32_t>(q), ex = static_cast<uint32_t>(e + 15);
    if (mant == 2048) { mant = 1024; ++ex; }
    h = ex >= 31 ? 0x7C00 : static_cast<uint16_t>((ex << 10) | (mant - 1024));
  }
  static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(h | sign);
}

struct Args {
  fp_problem_v1 p;
  fp_tensors_v1 t;
};

__global__ void naive_attention(Args a) {
  const fp_problem_v1& p = a.p;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= static_cast<int64_t>(p.batch) * p.hq * p.sq) return;
  const int i = static_cast<int>(row % p.sq), h = static_cast<int>((row / p.sq) % p.hq),
            b = static_cast<int>(row / (static_cast<int64_t>(p.sq) * p.hq));
  const int hk = h / (p.hq / p.hkv);
  const int64_t diag = p.causal == FP_CAUSAL_TOP_LEFT ? 0 : static_cast<int64_t>(p.sk) - p.sq;
  const int64_t hi = p.causal == FP_CAUSAL_NONE ? p.sk - 1 : (i + diag < p.sk - 1 ? i + diag : p.sk - 1);
  auto score = [&](int64_t j) {
    float s = 0.f;
    for (int x = 0; x < p.d; ++x)
      s += load(a.t.q, b * p.q_strides[0] + i * p.q_strides[1] + h * p.q_strides[2] + x * p.q_strides[3], p.dtype) *
           load(a.t.k, b * p.k_strides[0] + j * p.k_strides[1] + hk * p.k_strides[2] + x * p.k_strides[3], p.dtype);
    return s * static_cast<float>(p.scale);
  };
  float mx = -INFINITY;
  for (int64_t j = 0; j <= hi; ++j) mx = fmaxf(mx, score(j));
  float acc[kMaxDv];
  for (int x = 0; x < p.dv; ++x) acc[x] = 0.f;
  float sum = 0.f;
  for (int64_t j = 0; j <= hi; ++j) {
    const float e = expf(score(j) - mx);
    sum += e;
    for (int x = 0; x < p.dv; ++x)
      acc[x] += e * load(a.t.v, b * p.v_strides[0] + j * p.v_strides[1] + hk * p.v_strides[2] + x * p.v_strides[3], p.dtype);
  }
  for (int x = 0; x < p.dv; ++x)
    store(a.t.o, b * p.o_strides[0] + i * p.o_strides[1] + h * p.o_strides[2] + x * p.o_strides[3], p.out_dtype,
          sum > 0.f ? acc[x] / sum : 0.f);
  a.t.lse[(static_cast<int64_t>(b) * p.hq + h) * p.sq + i] = sum > 0.f ? mx + logf(sum) : -INFINITY;
}

int supports(const fp_problem_v1* p, char* why, size_t n) {
  const char* r = nullptr;
  if (p->window_left >= 0 || p->window_right >= 0) r = "window: not implemented by the naive plug-in";
  else if (p->softcap != 0) r = "softcap: not implemented by the naive plug-in";
  else if (p->alibi_slopes) r = "alibi_slopes: not implemented by the naive plug-in";
  else if (p->seqlens_k) r = "seqlens_k: not implemented by the naive plug-in";
  else if (p->dv > kMaxDv) r = "dv: at most 256 in the naive plug-in";
  if (!r) return 1;
  std::snprintf(why, n, "%s", r);
  return 0;
}

int launch(const fp_problem_v1* p, const fp_tensors_v1* t, char* err, size_t n) {
  const int64_t rows = static_cast<int64_t>(p->batch) * p->hq * p->sq;
  if (rows == 0) return 0;
  Args a{*p, *t};
  a.p.alibi_slopes = nullptr;  // host pointers must not travel to the device
  a.p.seqlens_k = nullptr;
  const int block = 128;
  naive_attention<<<static_cast<unsigned>((rows + block - 1) / block), block, 0,
                    static_cast<fp_rt::Stream>(t->stream)>>>(a);
  const fp_rt::Error e = fp_rt::get_last_error();
  if (e == fp_rt::kSuccess) return 0;
  std::snprintf(err, n, "naive_attention launch: %s", fp_rt::error_string(e));
  return 1;
}

const fp_plugin_v1 kDescriptor = {FLASHPROBE_PLUGIN_ABI_VERSION, sizeof(fp_plugin_v1), "naive",
                                  "example plug-in: one thread per query row, two passes", supports, launch};
}  // namespace

extern "C" __attribute__((visibility("default"))) const fp_plugin_v1* flashprobe_plugin_v1(void) {
  return &kDescriptor;
}
