// The mma kernel's registry entry: which devices and problems it takes (pure host code, in every
// build) and its launch, which picks the atom of the device's architecture family.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "flashprobe/atoms/targets.h"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/registry.h"
#include "src/launchers.h"
#include "src/mma/mma_launchers.h"
#include "src/variant_makers.h"

namespace flashprobe::kernels {

namespace {

// The atom family of a device: "sm80" (mma.sync m16n8k16, sm_80 and later), "gfx11" (RDNA3 WMMA),
// "gfx12" (RDNA4 WMMA), "cdna" (MFMA 32x32x8), or "" (none); the AMD families by the atoms' target
// lists (flashprobe/atoms/targets.h), the ones the atoms' mma() is compiled for.
std::string atom_family(const DeviceInfo& dev) {
  if (dev.vendor == "nvidia") return detail::nvidia_sm(dev) >= 80 ? "sm80" : "";
  const std::string_view arch = atoms::amd_base_arch(dev.arch);
  if (atoms::in(atoms::targets::kGfx11Wmma, arch)) return "gfx11";
  if (atoms::in(atoms::targets::kGfx12Wmma, arch)) return "gfx12";
  if (atoms::in(atoms::targets::kCdnaMfmaF16, arch)) return "cdna";
  return "";
}

// AMD: d = dv = a class only (the general instantiation's masking of the columns past d and dv is
// run on NVIDIA only); MFMA 32x32x8 tiles O in 32 columns.
bool amd_dim_ok(const std::string& family, int d) {
  if (head_dim_class(kMmaDimClasses, d, d) != HeadDimClass{d, d}) return false;
  return family != "cdna" || d % 32 == 0;
}

Support mma_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (Support v = Support::valid(p); !v) return v;
  const std::string fam = atom_family(dev);
  if (fam.empty())
    return Support::no("arch=" + (dev.arch.empty() ? std::string("none") : dev.arch) +
                       ": mma has no matrix atom for it (sm_80+, gfx11, gfx12, gfx908/gfx90a/gfx94x/gfx950)");
  if (p.dtype == DType::f32) return Support::no("dtype=f32: mma reads f16 or bf16 inputs");
  if (fam == "cdna" && p.dtype == DType::bf16 &&
      !atoms::in(atoms::targets::kCdnaMfmaBf16_1k, atoms::amd_base_arch(dev.arch)))
    return Support::no("dtype=bf16 on " + dev.arch + ": its MFMA has no bf16_1k form (gfx90a and later)");
  if (fam == "sm80") {
    if (!head_dim_class(kMmaDimClasses, p.d, p.dv))
      return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": mma on " + dev.arch +
                         " takes d and dv that are multiples of 8 up to 256");
  } else {
    if (p.d != p.dv) return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": mma on " + dev.arch + " needs d == dv");
    if (!amd_dim_ok(fam, p.d))
      return Support::no("d=" + std::to_string(p.d) + ": mma on " + dev.arch + " is built for d in " +
                         (fam == "cdna" ? "{64, 96, 128, 256}" : "{64, 80, 96, 128, 256}"));
  }
  if (p.hq > kMaxGridYZ || p.batch > kMaxGridYZ)
    return Support::no("hq=" + std::to_string(p.hq) + ", batch=" + std::to_string(p.batch) + " exceed the grid limit " +
                       std::to_string(kMaxGridYZ));
  if (static_cast<std::int64_t>(p.sq) + p.sk > kMaxLen32)
    return Support::no("sq + sk = " + std::to_string(static_cast<std::int64_t>(p.sq) + p.sk) +
                       ": mma keeps rows and keys in 32 bits (at most " + std::to_string(kMaxLen32) + ")");
  return Support::yes();
}

#ifdef FP_HAVE_GPU_RUNTIME
template <template <int> class Launch, class... Args>
void by_dim(int d, Args&&... args) {
  switch (d) {
    case 64: Launch<64>::run(args...); return;
    case 80: Launch<80>::run(args...); return;
    case 96: Launch<96>::run(args...); return;
    case 128: Launch<128>::run(args...); return;
    case 256: Launch<256>::run(args...); return;
  }
  throw UsageError("d=" + std::to_string(d) + ": mma has no tile class of that width (64, 80, 96, 128, 256)");
}
template <int D>
struct NvidiaLaunch {
  static void run(const Params& p, Stream s, const detail::MmaOptions& o) { detail::launch_mma_nvidia<D>(p, s, o); }
};
template <int D>
struct AmdLaunch {
  static void run(const Params& p, const std::string& fam, Stream s, const detail::MmaOptions& o) {
    detail::launch_mma_amd<D>(p, fam, s, o);
  }
};
#endif

}  // namespace

std::string detail::mma_atom_family(const DeviceInfo& dev) { return atom_family(dev); }

// The arch string is the device's identity (arch_number is a convenience some callers leave 0).
int detail::nvidia_sm(const DeviceInfo& dev) {
  if (dev.vendor != "nvidia") return 0;
  if (dev.arch_number != 0) return dev.arch_number;
  return dev.arch.rfind("sm_", 0) == 0 ? std::atoi(dev.arch.c_str() + 3) : 0;
}

#if defined(FP_HAVE_GPU_RUNTIME) && !defined(FP_VENDOR_HIP)
void detail::launch_mma_nvidia_any(const Params& p, Stream s, const MmaOptions& o) {
  // The fine ladder's classes outside kMmaDimClasses here (head_dim_classes.h), the rest by_dim's;
  // the variants mma/small=plain|fma run their problems in class 64 (src/mma/mma_small.h).
  const bool extras = p.softcap != 0.f || p.alibi != nullptr;
  const bool small64 = (o.small == dev::MmaSmall::plain || o.small == dev::MmaSmall::fma) && dev::mma_small_takes(p.d, p.dv, extras);
  const int d = small64 ? dev::kMmaSmallClass : mma_nvidia_class(p.d, p.dv, extras, o.coarse_classes).d;
  switch (d) {
    case 32: launch_mma_nvidia<32>(p, s, o); return;
    case 160: launch_mma_nvidia<160>(p, s, o); return;
    case 192: launch_mma_nvidia<192>(p, s, o); return;
  }
  by_dim<NvidiaLaunch>(d, p, s, o);
}
#endif

KernelInfo make_mma(std::string name, std::string description, const detail::MmaOptions& o) {
  return {std::move(name), std::move(description), mma_supports, [](const AttnProblem&) { return std::size_t{0}; },
          [o](const AttnProblem& p, const DeviceTensors& t, void* ws, Stream s) {
            (void)ws;
#ifdef FP_HAVE_GPU_RUNTIME
            const Params prm = make_params(p, t);
#if defined(FP_VENDOR_HIP)
            static const std::string family = atom_family(require_device());  // one device per process
            by_dim<AmdLaunch>(p.d, prm, family, s, o);
#else
            detail::launch_mma_nvidia_any(prm, s, o);
#endif
#else
            (void)p, (void)t, (void)s, (void)o;
            throw NoDevice("no GPU device: this build has no GPU backend, mma cannot launch");
#endif
          }};
}

KernelInfo make_mma_kernel() {
  return make_mma("mma",
                  "tensor-core FlashAttention-2 driven by an atom: mma.sync m16n8k16 on NVIDIA, WMMA on gfx11/gfx12, "
                  "MFMA 32x32x8 on CDNA; f16/bf16; NVIDIA: d, dv multiples of 8 up to 256 (tile classes 32, 64, 80, 96, "
                  "128, 160, 192, 256; with soft-cap or ALiBi 64, 80, 96, 128, 256), AMD: d = dv in {64, 80, 96, 128, 256}",
                  {});
}

}  // namespace flashprobe::kernels
