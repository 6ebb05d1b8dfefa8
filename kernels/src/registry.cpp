// The production kernel table: supports() and workspace_bytes() are pure host functions (they work
// in every build, CPU-only included); launch() calls the device code when this build has it.
#include "flashprobe/kernels/registry.h"

#include <algorithm>
#include <climits>
#include <sstream>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/decode_plan.h"
#include "src/launchers.h"

namespace flashprobe::kernels {

Support Support::valid(const AttnProblem& p) {
  const std::vector<ProblemIssue> errors = problem_errors(p);
  if (errors.empty()) return yes();
  return no("invalid problem: " + errors.front().field + ": " + errors.front().message);
}

namespace {

// What every kernel needs from the device and the problem.
Support common_support(const DeviceInfo& dev, const AttnProblem& p) {
  if (Support v = Support::valid(p); !v) return v;
  if (dev.arch.empty()) return Support::no("no GPU device (device arch is empty)");
  if (dev.wave_size != 32 && dev.wave_size != 64)
    return Support::no("device wave_size=" + std::to_string(dev.wave_size) + ": kernels are built for waves of 32 or 64");
  if (p.batch > kMaxGridYZ) return Support::no("batch=" + std::to_string(p.batch) + " exceeds the grid limit " + std::to_string(kMaxGridYZ));
  return Support::yes();
}

Support dtype_16bit(const char* kernel, const AttnProblem& p) {
  if (p.dtype == DType::f32)
    return Support::no(std::string("dtype=f32: ") + kernel + " reads f16 or bf16 inputs (ref3pass reads f32)");
  return Support::yes();
}

Support ref3pass_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (auto s = common_support(dev, p); !s) return s;
  const std::int64_t rows = std::int64_t{p.batch} * p.hq * p.sq;
  if (rows > INT_MAX) return Support::no("batch*hq*sq=" + std::to_string(rows) + " rows exceed the grid limit 2^31-1");
  if ((p.sk + 127) / 128 > kMaxGridYZ) return Support::no("sk=" + std::to_string(p.sk) + " is too long for ref3pass (grid.y)");
  const auto ws = static_cast<long long>(detail::ref3pass_workspace_bytes(p));
  if (dev.global_mem_bytes > 0 && ws > dev.global_mem_bytes / 2)
    return Support::no("ref3pass needs a " + std::to_string(ws) + "-byte score matrix (batch*hq*sq*sk f32), more than half of the device memory");
  return Support::yes();
}

Support tiled_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (auto s = common_support(dev, p); !s) return s;
  if (auto s = dtype_16bit("tiled", p); !s) return s;
  if (p.d != p.dv) return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": tiled needs d == dv");
  if (std::find(std::begin(kTiledDims), std::end(kTiledDims), p.d) == std::end(kTiledDims))
    return Support::no("d=" + std::to_string(p.d) + ": tiled is built for d in {64, 80, 96, 128, 256}");
  if (p.hq > kMaxGridYZ) return Support::no("hq=" + std::to_string(p.hq) + " exceeds the grid limit " + std::to_string(kMaxGridYZ));
  return Support::yes();
}

Support decode_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (auto s = common_support(dev, p); !s) return s;
  if (auto s = dtype_16bit("decode", p); !s) return s;
  if (p.sq > kDecodeMaxSq)
    return Support::no("sq=" + std::to_string(p.sq) + ": decode handles sq <= " + std::to_string(kDecodeMaxSq));
  if (p.d > kDecodeMaxDim || p.dv > kDecodeMaxDim)
    return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": decode handles d, dv <= " +
                       std::to_string(kDecodeMaxDim));
  if (p.sk > kDecodeMaxKeys)
    return Support::no("sk=" + std::to_string(p.sk) + ": decode indexes keys in 32 bits, sk <= " + std::to_string(kDecodeMaxKeys));
  if (std::int64_t{p.hq} * p.sq > kMaxGridYZ)
    return Support::no("hq*sq=" + std::to_string(std::int64_t{p.hq} * p.sq) + " exceeds the grid limit " + std::to_string(kMaxGridYZ));
  return Support::yes();
}

#ifdef FP_HAVE_GPU_RUNTIME
void tiled_launch(const Params& prm, Stream s) {
  switch (prm.d) {
    case 64: detail::launch_tiled<Bug::none, 64>(prm, s); return;
    case 80: detail::launch_tiled<Bug::none, 80>(prm, s); return;
    case 96: detail::launch_tiled<Bug::none, 96>(prm, s); return;
    case 128: detail::launch_tiled<Bug::none, 128>(prm, s); return;
    case 256: detail::launch_tiled<Bug::none, 256>(prm, s); return;
  }
  throw UsageError("d=" + std::to_string(prm.d) + ": tiled is built for d in {64, 80, 96, 128, 256}");
}
#endif

#ifndef FP_HAVE_GPU_RUNTIME
[[noreturn]] void no_backend(const std::string& kernel) {
  throw NoDevice("no GPU device: this build has no GPU backend, " + kernel + " cannot launch");
}
#endif

KernelInfo make_decode(const std::string& name, int forced_splits) {
  auto splits_of = [forced_splits](const AttnProblem& p) { return forced_splits > 0 ? forced_splits : decode_default_splits(p); };
  KernelInfo k{name,
          forced_splits > 0 ? "decode with exactly " + std::to_string(forced_splits) + " key split(s) (tests)"
                            : "split-K decode for sq <= 8: key splits merged through their LSE",
          decode_supports,
          [splits_of](const AttnProblem& p) { return detail::decode_workspace_bytes(p, splits_of(p)); },
          [splits_of, name](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
            (void)name;
            detail::launch_decode<Bug::none>(make_params(p, t), splits_of(p), ws, s);
#else
            (void)p, (void)t, (void)ws, (void)s;
            no_backend(name);
#endif
          }};
  k.with_splits = [](int n) { return decode_with_splits(n); };
  return k;
}

std::vector<KernelInfo> make_table() {
  std::vector<KernelInfo> v;
  v.push_back(make_mma_kernel());
  v.push_back(make_wgmma_kernel());
  v.push_back(make_decode("decode", 0));
  v.push_back({"tiled", "scalar FlashAttention-2: online softmax, K/V tiles through shared memory, d = dv in {64, 80, 96, 128, 256}",
               tiled_supports, [](const AttnProblem&) { return std::size_t{0}; },
               [](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
                 (void)ws;
                 tiled_launch(make_params(p, t), s);
#else
                 (void)p, (void)t, (void)ws, (void)s;
                 no_backend("tiled");
#endif
               }});
  v.push_back({"ref3pass", "QK^T, softmax, PV as three kernels through an f32 score matrix: any shape, f32/f16/bf16",
               ref3pass_supports, detail::ref3pass_workspace_bytes,
               [](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
                 detail::launch_ref3pass<Bug::none>(make_params(p, t), ws, s);
#else
                 (void)p, (void)t, (void)ws, (void)s;
                 no_backend("ref3pass");
#endif
               }});
  return v;
}

}  // namespace

namespace detail {
std::size_t ref3pass_workspace_bytes(const AttnProblem& p) {
  return static_cast<std::size_t>(std::int64_t{p.batch} * p.hq * p.sq) * static_cast<std::size_t>(std::max(p.sk, 0)) * sizeof(float);
}
std::size_t decode_workspace_bytes(const AttnProblem& p, int splits) {
  const auto parts = static_cast<std::size_t>(std::int64_t{p.batch} * p.hq * p.sq * splits);
  return parts * static_cast<std::size_t>(p.dv + 1) * sizeof(float);
}
}  // namespace detail

int decode_default_splits(const AttnProblem& p) {
  // The SM count of the device this process runs on (the first, as require_device() picks it);
  // without one, decode_splits plans for a nominal device. Asked once: one device per process.
  static const int sms = [] {
    const DeviceQuery q = query_devices();
    return q.devices.empty() ? 0 : q.devices.front().multiprocessors;
  }();
  return decode_splits(p, sms);
}

KernelInfo decode_with_splits(int splits) {
  if (splits < 1) throw UsageError("decode splits=" + std::to_string(splits) + " is not allowed: use >= 1");
  return make_decode("decode/splits=" + std::to_string(splits), splits);
}

const std::vector<KernelInfo>& kernels() {
  static const std::vector<KernelInfo> table = make_table();
  return table;
}

const KernelInfo* find_kernel(const std::string& name) {
  for (auto& k : kernels())
    if (k.name == name) return &k;
  return nullptr;
}

std::string kernel_names() {
  std::string s;
  for (auto& k : kernels()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

}  // namespace flashprobe::kernels
