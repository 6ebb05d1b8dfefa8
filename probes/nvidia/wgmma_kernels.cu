// Experiment kernel for wgmma (sm_90a): one warpgroup (128 threads, one block) per experiment.
// Compiled only for sm_90a and, as a loud fallback, for sm_80, where the wgmma instructions trap (see
// probes/nvidia/CMakeLists.txt); the host refuses to launch it on anything but compute capability 9.0.
//
// Shared-memory operands use the canonical K-major no-swizzle ("interleave") layout: 8x8 core
// matrices of 16-byte rows (one m or n per row, 8 consecutive k), core matrices adjacent in K
// kLeadingBytes apart, adjacent in M/N kStrideBytes apart. The descriptor names exactly these.
#include <cstdint>

#include "device_io.h"
#include "elements.cuh"
#include "exact.h"
#include "flashprobe/core/device.cuh"
#include "flashprobe/core/device_info.h"
#include "flashprobe/probes/nvidia/executors.h"
#include "flashprobe/atoms/sm75_ldmatrix.cuh"  // smem_address
#include "flashprobe/atoms/sm90_wgmma.cuh"

namespace flashprobe::nvidia {
namespace {

constexpr int kThreads = 128;       // one warpgroup
constexpr int kM = 64, kK = 16;     // every m64nNk16 form
constexpr int kLeadingBytes = 128;  // LBO: next core matrix along K (the two K halves are adjacent)
constexpr int kStrideBytes = 256;   // SBO: next 8 rows along M/N (two 128-byte core matrices per 8 rows)

FP_HD constexpr int kmajor_byte_offset(int mn, int k) {
  return (mn / 8) * kStrideBytes + (k / 8) * kLeadingBytes + (mn % 8) * 16 + (k % 8) * 2;
}

// Matrix descriptor (PTX ISA "Matrix Descriptor Format" for wgmma): start address, LBO and SBO in
// 16-byte units in bits 0-13, 16-29, 32-45; base offset (49-51) 0; swizzle mode (62-63) 0 = none.
FP_DEV std::uint64_t smem_descriptor(const void* base) {
  const std::uint64_t addr = smem_address(base);
  return ((addr >> 4) & 0x3FFF) | (static_cast<std::uint64_t>(kLeadingBytes >> 4) << 16) |
         (static_cast<std::uint64_t>(kStrideBytes >> 4) << 32);
}

template <class Op, bool kASmem>
__global__ void __launch_bounds__(kThreads)
    wgmma_experiments(int experiments, const float* a, const float* b, const float* c, float* d) {
  constexpr int N = Op::N;
  constexpr int kAcc = Op::kC;
  __shared__ alignas(128) std::uint16_t sa[kM * kK];
  __shared__ alignas(128) std::uint16_t sb[N * kK];
  const long long e = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x);
  for (int i = t; i < kK * N; i += kThreads) {
    const int k = i / N, n = i % N;
    sb[kmajor_byte_offset(n, k) / 2] = static_cast<std::uint16_t>(elem_bits<Elem::f16>(b[e * kK * N + i]));
  }
  if constexpr (kASmem) {
    for (int i = t; i < kM * kK; i += kThreads) {
      const int m = i / kK, k = i % kK;
      sa[kmajor_byte_offset(m, k) / 2] = static_cast<std::uint16_t>(elem_bits<Elem::f16>(a[e * kM * kK + i]));
    }
  }
  atoms::fence_proxy_async_shared();
  __syncthreads();
  const long long thread_index = e * kThreads + t;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = c[thread_index * kAcc + i];
  atoms::wgmma_fence();
  if constexpr (kASmem) {
    Op::ss(acc, smem_descriptor(sa), smem_descriptor(sb), 1);
  } else {
    std::uint32_t ar[4];
    load_fragment<Elem::f16>(a + thread_index * 8, ar);
    Op::rs(acc, ar, smem_descriptor(sb), 1);
  }
  atoms::wgmma_commit();
  atoms::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[thread_index * kAcc + i] = acc[i];
}

template <class Op>
void launch(const WgmmaConfig& cfg, int experiments, std::span<const float> a, std::span<const float> b,
            std::span<const float> c, std::span<float> d) {
  const std::string what = name(cfg);
  const std::size_t threads = static_cast<std::size_t>(experiments) * kThreads;
  const int acc = cfg.n / 2;
  require_size(a, cfg.a_from_smem ? static_cast<std::size_t>(experiments) * kM * kK : threads * 8, what + " A");
  require_size(b, static_cast<std::size_t>(experiments) * kK * cfg.n, what + " B");
  require_size(c, threads * acc, what + " C");
  if (d.size() != threads * acc) throw UsageError(what + " D has the wrong size");
  require_exact(ExactKind::f16, a, what + " A");
  require_exact(ExactKind::f16, b, what + " B");
  require_exact(ExactKind::f32, c, what + " C");
  auto da = detail::to_device(a), db = detail::to_device(b), dc = detail::to_device(c);
  auto dd = detail::output_buffer(d.size_bytes());
  if (cfg.a_from_smem)
    wgmma_experiments<Op, true><<<experiments, kThreads>>>(experiments, da.as<float>(), db.as<float>(),
                                                           dc.as<float>(), dd.as<float>());
  else
    wgmma_experiments<Op, false><<<experiments, kThreads>>>(experiments, da.as<float>(), db.as<float>(),
                                                            dc.as<float>(), dd.as<float>());
  FP_CHECK_LAUNCH("wgmma_experiments");
  detail::from_device(dd, d, what);
}

}  // namespace

std::string name(const WgmmaConfig& cfg) {
  return "SM90_64x" + std::to_string(cfg.n) + "x16_F32F16F16_" + (cfg.a_from_smem ? "SS" : "RS");
}

Slots wgmma_slots(const WgmmaConfig& cfg) { return {kThreads, cfg.a_from_smem ? 0 : 8, 0, cfg.n / 2}; }

bool wgmma_supported(const DeviceInfo& dev, std::string* why) {
  if (dev.vendor == "nvidia" && dev.arch_number == 90) return true;
  if (why)
    *why = dev.name + " is " + dev.arch + ": wgmma exists only on sm_90 (this build has it as sm_90a code)" +
           (dev.arch_number > 90 ? "; newer GPUs use other instructions (tcgen05 on sm_100)" : "");
  return false;
}

void require_wgmma(const DeviceInfo& dev, const std::string& atom_name) {
  std::string why;
  if (!wgmma_supported(dev, &why)) throw UsageError(atom_name + " cannot run here: " + why);
}

void run_wgmma(const WgmmaConfig& cfg, int experiments, std::span<const float> a, std::span<const float> b,
               std::span<const float> c, std::span<float> d) {
  if (experiments <= 0) throw UsageError("run_wgmma: experiments must be positive");
  require_wgmma(require_device(), name(cfg));
  switch (cfg.n) {
    case 8: return launch<atoms::SM90_64xNx16_F32F16<8>>(cfg, experiments, a, b, c, d);
    case 16: return launch<atoms::SM90_64xNx16_F32F16<16>>(cfg, experiments, a, b, c, d);
    case 64: return launch<atoms::SM90_64xNx16_F32F16<64>>(cfg, experiments, a, b, c, d);
    case 128:
      return launch<atoms::SM90_64xNx16_F32F16<128>>(cfg, experiments, a, b, c, d);
    case 256:
      return launch<atoms::SM90_64xNx16_F32F16<256>>(cfg, experiments, a, b, c, d);
  }
  throw UsageError("wgmma: N = " + std::to_string(cfg.n) + " is not one of 8, 16, 64, 128, 256");
}

}  // namespace flashprobe::nvidia
