// kv_append: cache[b, offset(b) + t, h, x] = new[b, t, h, x]; one thread per element of the new
// tokens (K and V handled by the same thread when x < both dims). A pure copy: the element's bits
// are moved unchanged (2 or 4 bytes), no conversion.
#include <cstdint>

#include "flashprobe/core/device.cuh"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/kv_append.h"

namespace flashprobe::kernels {
namespace {

constexpr int kAppendThreads = 256;

struct AppendArgs {
  const void* k_new;
  const void* v_new;
  void* k_cache;
  void* v_cache;
  const int* offsets;
  int kv_offset;
  int batch, hkv, d, dv, s_new, width;  // width = max(d, dv)
  std::int64_t kn[4], vn[4], kc[4], vc[4];
};

FP_DEV std::int64_t off(const std::int64_t* s, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t x) {
  return b * s[0] + t * s[1] + h * s[2] + x * s[3];
}

template <class T>
__global__ __launch_bounds__(kAppendThreads) void kv_append_kernel(AppendArgs a) {
  const std::int64_t e = std::int64_t{blockIdx.x} * kAppendThreads + threadIdx.x;
  const std::int64_t total = std::int64_t{a.batch} * a.s_new * a.hkv * a.width;
  if (e >= total) return;
  const int x = static_cast<int>(e % a.width);
  const int h = static_cast<int>((e / a.width) % a.hkv);
  const int t = static_cast<int>((e / (std::int64_t{a.width} * a.hkv)) % a.s_new);
  const int b = static_cast<int>(e / (std::int64_t{a.width} * a.hkv * a.s_new));
  const int dst = (a.offsets ? a.offsets[b] : a.kv_offset) + t;
  if (x < a.d) static_cast<T*>(a.k_cache)[off(a.kc, b, dst, h, x)] = static_cast<const T*>(a.k_new)[off(a.kn, b, t, h, x)];
  if (x < a.dv) static_cast<T*>(a.v_cache)[off(a.vc, b, dst, h, x)] = static_cast<const T*>(a.v_new)[off(a.vn, b, t, h, x)];
}

void copy4(std::int64_t* dst, const Strides& s) {
  dst[0] = s.b;
  dst[1] = s.s;
  dst[2] = s.h;
  dst[3] = s.d;
}

}  // namespace

void launch_kv_append(const KvAppendProblem& a, const KvAppendTensors& t, Stream stream) {
  if (auto errs = validate(a); !errs.empty()) {
    std::string msg = "invalid KV append:";
    for (auto& e : errs) msg += "\n  " + e;
    throw UsageError(msg);
  }
  if (!a.offsets.empty() && !t.offsets)
    throw UsageError("KV append has per-batch offsets but no device offsets pointer (KvAppendTensors::offsets)");
  AppendArgs g{t.k_new, t.v_new, t.k_cache, t.v_cache, a.offsets.empty() ? nullptr : t.offsets, a.kv_offset,
               a.batch, a.hkv, a.d, a.dv, a.s_new, a.d > a.dv ? a.d : a.dv, {}, {}, {}, {}};
  copy4(g.kn, a.k_new_strides());
  copy4(g.vn, a.v_new_strides());
  copy4(g.kc, a.k_cache_strides());
  copy4(g.vc, a.v_cache_strides());
  const std::int64_t total = std::int64_t{a.batch} * a.s_new * a.hkv * g.width;
  if (total == 0) return;
  const auto blocks = static_cast<unsigned>((total + kAppendThreads - 1) / kAppendThreads);
  if (dtype_size(a.dtype) == 4) kv_append_kernel<std::uint32_t><<<blocks, kAppendThreads, 0, stream>>>(g);
  else kv_append_kernel<std::uint16_t><<<blocks, kAppendThreads, 0, stream>>>(g);
  FP_CHECK_LAUNCH("kv_append_kernel");
}

}  // namespace flashprobe::kernels
