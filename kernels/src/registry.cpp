// The production kernel table: supports() and workspace_bytes() are pure host functions (they work
// in every build, CPU-only included); launch() calls the device code when this build has it.
#include "flashprobe/kernels/registry.h"

#include <algorithm>
#include <climits>
#include <sstream>

#include "flashprobe/core/error.h"
#include "flashprobe/kernels/decode_plan.h"
#include "src/launchers.h"
#include "src/variant_makers.h"

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

// The SM count of the device this process runs on (the first, as require_device() picks it); 0
// without one (decode's plans then assume a nominal device). Asked once: one device per process.
int this_device_sms() {
  static const int sms = [] {
    const DeviceQuery q = query_devices();
    return q.devices.empty() ? 0 : q.devices.front().multiprocessors;
  }();
  return sms;
}

std::string decode_name(const detail::DecodeOptions& o) {
  std::string opts;
  const auto add = [&opts](const std::string& kv) { opts += (opts.empty() ? "" : ",") + kv; };
  if (o.splits > 0) add("splits=" + std::to_string(o.splits));
  if (o.half_plan) add("plan=half");
  if (o.full_plan) add("plan=full");
  if (o.fused) add("fused=on");
  if (o.walk > 0) add("walk=" + std::to_string(o.walk));
  if (o.combine == detail::DecodeCombine::wide) add("combine=wide");
  if (o.combine == detail::DecodeCombine::pdl) add("combine=pdl");
  if (o.depth == 3) add("depth=3");
  if (o.mma) add("mma=on");
  return opts.empty() ? "decode" : "decode/" + opts;
}

std::string decode_description(const detail::DecodeOptions& o) {
  if (o.splits == 0 && !o.fused && !o.half_plan && !o.full_plan && o.combine == detail::DecodeCombine::loop && o.depth == 2 && !o.mma)
    return "split-K decode for sq <= 8: key splits merged through their LSE";
  std::string d = "decode (benchmarks and tests):";
  if (o.splits > 0) d += " exactly " + std::to_string(o.splits) + " key split(s);";
  if (o.half_plan) d += " the split count for half the resident blocks (decode_fused_splits) at any rows per block;";
  if (o.full_plan) d += " the split count for one full wave of resident blocks (decode_splits) at any rows per block;";
  if (o.combine == detail::DecodeCombine::wide) d += " the combine with every split's loads issued at once (decode_combine_wide);";
  if (o.combine == detail::DecodeCombine::pdl)
    d += " the wide combine launched as a programmatic dependent of the split kernel (PDL on sm_90);";
  if (o.depth == 3) d += " the split kernel's 16-byte loads two steps ahead (one row per block; 2 blocks per SM);";
  if (o.mma)
    d += std::string(" the group's query rows as the rows of a tensor-core tile (mma m16n8k16), K/V once per kv head through "
                     "shared memory, where it takes the problem (decode_mma_takes; NVIDIA), decode's split kernel elsewhere") +
         (o.splits > 0 ? ";" : ", decode_mma_splits' count;");
  if (o.fused)
    d += std::string(" one kernel, the combine in the last block of each row tile, ") +
         (o.splits > 0 ? "" : "the split count for half the resident blocks (decode_fused_splits), ") +
         (o.walk > 0 ? "at most " + std::to_string(o.walk) + " split(s) per block;" : std::string("splits per block for half a wave of the batch;"));
  return d;
}

}  // namespace

KernelInfo make_decode_variant(const detail::DecodeOptions& o) {
  if (o.splits < 0 || o.walk < 0 || (o.walk > 0 && !o.fused) || ((o.half_plan || o.full_plan) && o.splits > 0) || (o.half_plan && o.full_plan) ||
      (o.fused && (o.combine != detail::DecodeCombine::loop || o.depth != 2)) || (o.depth != 2 && o.depth != 3) ||
      (o.mma && (o.fused || o.half_plan || o.full_plan || o.combine != detail::DecodeCombine::loop || o.depth != 2)))
    throw UsageError("decode variant " + decode_name(o) +
                     " is not allowed: splits, walk >= 1 when given, walk only with fused=on, plan (half or full) not with a forced "
                     "split count, combine and depth (2 or 3) not with fused=on (the fused kernel combines in its last block), mma=on with "
                     "none of fused, plan, combine and depth");
  const std::string name = decode_name(o);
  auto splits_of = [o](const AttnProblem& p) {
    return o.splits > 0                ? o.splits
           : o.mma                  ? decode_default_mma_splits(p)
           : o.fused || o.half_plan ? decode_default_fused_splits(p)
           : o.full_plan            ? decode_default_full_wave_splits(p)
                                    : decode_default_splits(p);
  };
  auto walk_of = [o](const AttnProblem& p, int splits) {
    return o.walk > 0 ? std::min(o.walk, splits) : decode_default_walk(p, splits);
  };
  KernelInfo k{name, decode_description(o), decode_supports,
               [o, splits_of, walk_of](const AttnProblem& p) {
                 const int n = splits_of(p);
                 return o.fused ? detail::decode_walk_workspace_bytes(p, n, walk_of(p, n)) : detail::decode_workspace_bytes(p, n);
               },
               [o, splits_of, walk_of, name](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
#ifdef FP_HAVE_GPU_RUNTIME
                 (void)name;
                 const int n = splits_of(p);
                 if (o.mma) detail::launch_decode_mma(make_params(p, t), n, ws, s);
                 else if (o.fused) detail::launch_decode_walk(make_params(p, t), n, walk_of(p, n), ws, s);
                 else if (o.combine != detail::DecodeCombine::loop || o.depth != 2)
                   detail::launch_decode_combined(make_params(p, t), n, o.combine, o.depth, ws, s);
                 else detail::launch_decode<Bug::none>(make_params(p, t), n, ws, s);
#else
                 (void)o, (void)p, (void)t, (void)ws, (void)s;
                 no_backend(name);
#endif
               }};
  k.with_splits = [o](int n) {
    if (n < 1) throw UsageError("decode splits=" + std::to_string(n) + " is not allowed: use >= 1");
    detail::DecodeOptions forced = o;
    forced.splits = n;
    forced.half_plan = forced.full_plan = false;  // the forced count replaces the plan's
    return make_decode_variant(forced);
  };
  return k;
}

namespace {

std::vector<KernelInfo> make_table() {
  std::vector<KernelInfo> v;
  v.push_back(make_mma_kernel());
  v.push_back(make_wgmma_kernel());
  v.push_back(make_decode_variant({}));
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
std::size_t decode_walk_workspace_bytes(const AttnProblem& p, int splits, int walk) {
  std::size_t bytes = decode_workspace_bytes(p, splits);
  if (decode_walk_blocks(splits, walk) > 1) {
    const DecodeGeometry g = decode_geometry(p.d, p.dv, p.group(), p.sq, p.softcap > 0 || !p.alibi_slopes.empty());
    bytes += static_cast<std::size_t>(decode_arrival_counters(p.batch, p.hkv, g)) * sizeof(unsigned);
  }
  return bytes;
}
}  // namespace detail

int decode_default_splits(const AttnProblem& p) { return decode_plan_splits(p, this_device_sms()); }
int decode_default_full_wave_splits(const AttnProblem& p) { return decode_splits(p, this_device_sms()); }
int decode_default_fused_splits(const AttnProblem& p) { return decode_fused_splits(p, this_device_sms()); }
int decode_default_walk(const AttnProblem& p, int splits) { return decode_walk(p, splits, this_device_sms()); }
int decode_default_mma_splits(const AttnProblem& p) { return decode_mma_splits(p, this_device_sms()); }

KernelInfo decode_with_splits(int splits) {
  if (splits < 1) throw UsageError("decode splits=" + std::to_string(splits) + " is not allowed: use >= 1");
  return make_decode_variant({splits, false, 0});
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
