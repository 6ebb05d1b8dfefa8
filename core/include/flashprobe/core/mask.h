#pragma once
// The attention mask, the diagonal and the GQA head map as constexpr functions for the host and the
// device: the statement of docs/attention-semantics.md ("Visibility") in code. AttnProblem
// (problem.h), and through it the oracle, computes through these; a plug-in kernel may include this
// header (C++20, no dependencies) to mask exactly as flashprobe checks. tests/core/test_mask.cpp
// checks them against a per-key reading of the definition; the oracle's tests hold an independent
// derivation (tests/oracle/naive_reference.cpp). The kernels' device code applies them to its
// parameters in kernels/src/attn_common.cuh. On the device they are always inlined, as the
// kernels' own helpers (FP_DEV) are.
//
//   std::int64_t lo = 0, hi = keys - 1;                       // the unmasked row
//   mask::narrow(i + mask::diag_offset(top_left, keys, sq), causal, wl, wr, lo, hi);
//   // row i sees keys lo..hi (none when lo > hi); query head h reads kv head mask::kv_head(h, hq / hkv)
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIP__)
// Always inlined, as nvcc's __forceinline__ (spelled out: HIP's clang defines __host__ and
// __device__ for a bare header, not __forceinline__).
#define FP_MASK_HD __host__ __device__ __inline__ __attribute__((always_inline))
#else
#define FP_MASK_HD
#endif

namespace flashprobe::mask {

// The diagonal of a batch with `keys` keys and `sq` query rows: key j is on the diagonal of row i
// when j = i + diag_offset. Bottom-right alignment (the KV-cache convention, also the reference
// point of windows and ALiBi without a causal mask): keys - sq; top-left (torch is_causal): 0.
FP_MASK_HD constexpr std::int64_t diag_offset(bool top_left, std::int64_t keys, std::int64_t sq) {
  return top_left ? 0 : keys - sq;
}

// Narrows [lo, hi] to the keys the mask lets a row see, the row's diagonal position being
// diag = i + diag_offset: causal keeps j <= diag, a left window (>= 0) j >= diag - left, a right
// window (>= 0) j <= diag + right; -1 leaves that side open.
template <class Int>
FP_MASK_HD constexpr void narrow(Int diag, bool causal, int window_left, int window_right, Int& lo, Int& hi) {
  if (causal) hi = diag < hi ? diag : hi;
  if (window_left >= 0) lo = diag - window_left > lo ? diag - window_left : lo;
  if (window_right >= 0) hi = diag + window_right < hi ? diag + window_right : hi;
}

// Grouped-query attention: query head h reads kv head h / group, group = hq / hkv. The query heads
// of kv head k are q_head(k, 0 .. group - 1), adjacent and in order; h is member group_member(h, group)
// of its group (kernels that walk a kv head's queries, decode and the backward, use the inverse).
FP_MASK_HD constexpr int kv_head(int h, int group) { return h / group; }
FP_MASK_HD constexpr int group_member(int h, int group) { return h % group; }
FP_MASK_HD constexpr int q_head(int kv, int member, int group) { return kv * group + member; }

}  // namespace flashprobe::mask
