#pragma once
// Params: the one argument every attention kernel takes, built on the host from an AttnProblem and
// the device pointers of its tensors. Plain data (no constructors, no host-only members) so that it
// is passed by value to __global__ functions and read identically by CUDA and HIP device code.
//
// What the kernels derive from it on the device (see src/attn_common.cuh, mirroring problem.h):
//   keys(b)   = seqlens ? seqlens[b] : sk
//   diag(b)   = causal == top_left ? 0 : keys(b) - sq       (bottom-right alignment, per batch)
//   kv head   = h / group
// Example:
//   DeviceTensors t{q, k, v, o, lse, /*alibi=*/nullptr, /*seqlens=*/nullptr};
//   Params prm = make_params(problem, t);   // throws UsageError naming what is missing or invalid
#include <cstdint>

#include "flashprobe/core/dtype.h"

namespace flashprobe {
struct AttnProblem;
}

namespace flashprobe::kernels {

// Element strides of a [B, S, H, D] tensor (a device-friendly copy of flashprobe::Strides).
struct DevStrides {
  std::int64_t b, s, h, d;
};

// Device pointers of one attention call. alibi_slopes ([Hq] f32) and seqlens_k ([B] int32) must be
// set exactly when the problem uses them.
struct DeviceTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  const float* alibi_slopes = nullptr;
  const int* seqlens_k = nullptr;
};

// The open end of dev::visible_offsets32's offsets: -(sq + kOffsetsFar32), past every row of a block.
inline constexpr int kOffsetsFar32 = 65536;
// Largest sq + sk a kernel with 32-bit row and key indices takes (dev::visible_range32 says why its
// indices fit): INT_MAX less kOffsetsFar32, so that visible_offsets32's -(sq + kOffsetsFar32) fits an
// int too (INT_MAX - 1024 let it leave int for sq past 2^31 - 65537). mma's and mma_bwd's supports()
// and launchers refuse larger problems, naming sq + sk and this bound.
inline constexpr int kMaxLen32 = 2147483647 - kOffsetsFar32;

// Causal alignment as kernels see it (same order as flashprobe::Causal).
enum class CausalMode : int { none = 0, bottom_right = 1, top_left = 2 };

struct Params {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;  // [B, Hq, Sq], contiguous
  DevStrides qs, ks, vs, os;
  int batch, hq, hkv, group, sq, sk, d, dv;
  int kv_offset;  // 0 or keys(b) - sq for every b (validated): the mask's diag comes from keys(b) alone
  float scale;    // effective scale (1/sqrt(d) when the problem says 0)
  float softcap;  // 0 = off
  CausalMode causal;
  int window_left, window_right;  // -1 = unbounded
  const float* alibi;             // [Hq] or null
  const int* seqlens;             // [B] or null
  DType dtype, out_dtype;
  // Every row of the tensor starts 16-byte aligned with its elements contiguous (dim stride 1,
  // 16-bit elements, seq/head/batch strides multiples of 8 elements where they matter, base
  // pointer 16-byte aligned): kernels may then move rows in 16-byte chunks. Set by make_params
  // (K and V together; O also needs out_dtype == dtype); 0 means element by element.
  int q_rows16 = 0, kv_rows16 = 0, o_rows16 = 0;
};

// @pre p is valid (validate(p) has no errors) — otherwise throws UsageError listing the errors.
// @pre t.alibi_slopes != nullptr iff p.alibi_slopes is non-empty; same for seqlens_k.
Params make_params(const AttnProblem& p, const DeviceTensors& t);

}  // namespace flashprobe::kernels
