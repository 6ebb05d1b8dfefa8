#pragma once
// KV-cache append: writes S_new new K/V tokens into a cache at per-batch offsets, so that
// append-then-attend equals attending over the full sequence (docs/attention-semantics.md, "Visibility").
//
//   cache_k[b, offset(b) + t, h, x] = k_new[b, t, h, x]   for t < s_new   (same for V)
//
// Not an attention kernel: it has its own problem type and launcher. The attention problem that
// follows uses sk = cache length and seqlens_k[b] = offset(b) + s_new (or kv_offset = offset when
// every batch has the same offset).
//
// Example (decode step: 7 cached tokens, 1 new one):
//   KvAppendProblem a; a.batch = 1; a.hkv = 2; a.d = a.dv = 64; a.s_new = 1; a.s_cache = 8; a.kv_offset = 7;
//   launch_kv_append(a, {k_new, v_new, k_cache, v_cache, nullptr}, stream);
#include <cstdint>
#include <string>
#include <vector>

#include "flashprobe/core/dtype.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {

struct KvAppendProblem {
  int batch = 1, hkv = 1, d = 64, dv = 64;
  int s_new = 1;    // tokens appended per batch
  int s_cache = 1;  // cache capacity (tokens)
  DType dtype = DType::f16;
  Strides k_new, v_new, k_cache, v_cache;  // all zero = contiguous BSHD
  int kv_offset = 0;                       // used when offsets is empty
  std::vector<int> offsets;                // per batch, or empty

  int offset(int b) const { return offsets.empty() ? kv_offset : offsets[static_cast<std::size_t>(b)]; }
  Strides k_new_strides() const;
  Strides v_new_strides() const;
  Strides k_cache_strides() const;
  Strides v_cache_strides() const;
};

// Errors (UsageError text) for a problem the kernel must not run: offset(b) + s_new > s_cache, ...
std::vector<std::string> validate(const KvAppendProblem& a);

struct KvAppendTensors {
  const void* k_new = nullptr;
  const void* v_new = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  const int* offsets = nullptr;  // device [batch] int32, required iff a.offsets is non-empty
};

// Asynchronous on `stream`; every launch checked. @throws UsageError for an invalid problem.
void launch_kv_append(const KvAppendProblem& a, const KvAppendTensors& t, Stream stream);

struct KvAppendResult {
  Tensor k_cache, v_cache;                // the caches after the append
  std::vector<std::string> guard_damage;  // per buffer, as in RunResult
};
// Host runner for tests: uploads the caches and the new tokens into guarded buffers, appends,
// synchronizes and downloads the caches. k_cache/v_cache hold the cache before the append.
KvAppendResult run_kv_append(const KvAppendProblem& a, const Tensor& k_new, const Tensor& v_new,
                             const Tensor& k_cache, const Tensor& v_cache);

}  // namespace flashprobe::kernels
