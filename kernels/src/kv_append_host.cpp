// Host side of the KV-cache append: validation, strides and the guarded test runner.
#include <cstring>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/kv_append.h"

namespace flashprobe::kernels {

Strides KvAppendProblem::k_new_strides() const { return k_new.is_zero() ? contiguous_strides(TensorLayout::bshd, s_new, hkv, d) : k_new; }
Strides KvAppendProblem::v_new_strides() const { return v_new.is_zero() ? contiguous_strides(TensorLayout::bshd, s_new, hkv, dv) : v_new; }
Strides KvAppendProblem::k_cache_strides() const { return k_cache.is_zero() ? contiguous_strides(TensorLayout::bshd, s_cache, hkv, d) : k_cache; }
Strides KvAppendProblem::v_cache_strides() const { return v_cache.is_zero() ? contiguous_strides(TensorLayout::bshd, s_cache, hkv, dv) : v_cache; }

std::vector<std::string> validate(const KvAppendProblem& a) {
  std::vector<std::string> e;
  auto pos = [&](const char* f, int v, int min) {
    if (v < min) e.push_back(std::string(f) + "=" + std::to_string(v) + " is not allowed: it must be >= " + std::to_string(min));
  };
  pos("batch", a.batch, 1);
  pos("hkv", a.hkv, 1);
  pos("d", a.d, 1);
  pos("dv", a.dv, 1);
  pos("s_new", a.s_new, 0);
  pos("s_cache", a.s_cache, 0);
  if (!e.empty()) return e;
  if (!a.offsets.empty() && a.offsets.size() != static_cast<std::size_t>(a.batch))
    e.push_back("offsets has " + std::to_string(a.offsets.size()) + " entries: it must have one per batch element (batch=" +
                std::to_string(a.batch) + ") or none");
  else
    for (int b = 0; b < a.batch; ++b)
      if (a.offset(b) < 0 || std::int64_t{a.offset(b)} + a.s_new > a.s_cache) {
        e.push_back("offset " + std::to_string(a.offset(b)) + " of batch " + std::to_string(b) + " with s_new=" +
                    std::to_string(a.s_new) + " does not fit a cache of s_cache=" + std::to_string(a.s_cache) + " tokens");
        break;
      }
  return e;
}

KvAppendResult run_kv_append(const KvAppendProblem& a, const Tensor& k_new, const Tensor& v_new, const Tensor& k_cache,
                             const Tensor& v_cache) {
  (void)require_device();
#ifndef FP_HAVE_GPU_RUNTIME
  (void)a, (void)k_new, (void)v_new, (void)k_cache, (void)v_cache;
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
#else
  auto up = [](const Tensor& t) {
    DeviceBuffer b(t.bytes.size());
    b.upload(std::span<const std::uint8_t>(t.bytes));
    return b;
  };
  DeviceBuffer kn = up(k_new), vn = up(v_new), kc = up(k_cache), vc = up(v_cache), offs;
  if (!a.offsets.empty()) {
    offs = DeviceBuffer(a.offsets.size() * sizeof(int));
    offs.upload(a.offsets);
  }
  launch_kv_append(a, {kn.data(), vn.data(), kc.data(), vc.data(), offs.as<const int>()}, nullptr);
  FP_CHECK(fp_rt::device_synchronize());
  KvAppendResult r{k_cache, v_cache, {}};
  const auto kb = kc.download(), vb = vc.download();
  std::memcpy(r.k_cache.bytes.data(), kb.data(), kb.size());
  std::memcpy(r.v_cache.bytes.data(), vb.data(), vb.size());
  const std::pair<const char*, const DeviceBuffer*> bufs[] = {{"k_new", &kn}, {"v_new", &vn}, {"k_cache", &kc}, {"v_cache", &vc}};
  for (auto& [name, b] : bufs)
    if (auto d = b->guard_damage()) r.guard_damage.push_back(std::string(name) + ": " + d->describe());
  if (offs.data())
    if (auto d = offs.guard_damage()) r.guard_damage.push_back("offsets: " + d->describe());
  return r;
#endif
}

}  // namespace flashprobe::kernels

#ifndef FP_HAVE_GPU_RUNTIME
namespace flashprobe::kernels {
void launch_kv_append(const KvAppendProblem&, const KvAppendTensors&, Stream) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off), kv_append cannot launch");
}
}  // namespace flashprobe::kernels
#endif
