// mma_bwd_amd: its domain and launch (the kernels: src/mma/mma_bwd_amd.cuh, the launch:
// mma_bwd_amd.cu, hip builds only).
#include <algorithm>
#include <string>

#include "flashprobe/atoms/targets.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/bwd_params.h"
#include "src/mma/mma_bwd_amd_launchers.h"
#include "src/mma/mma_bwd_amd_plan.h"
#include "src/mma/mma_bwd_registry.h"
#include "src/mma/mma_launchers.h"

namespace flashprobe::kernels {

Support mma_bwd_amd_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (Support v = Support::valid(p); !v) return v;
  const std::string fam = detail::mma_atom_family(dev);
  if (fam != "gfx11" && fam != "gfx12" && fam != "cdna")
    return Support::no("arch=" + (dev.arch.empty() ? std::string("none") : dev.arch) +
                       ": mma_bwd_amd runs on AMD gfx11/gfx12 (WMMA) and CDNA (MFMA 32x32x8); other devices take "
                       "mma_bwd or tiled_bwd");
  if (p.dtype == DType::f32) return Support::no("dtype=f32: mma_bwd_amd reads f16 or bf16 inputs");
  if (fam == "cdna" && p.dtype == DType::bf16 && !atoms::in(atoms::targets::kCdnaMfmaBf16_1k, atoms::amd_base_arch(dev.arch)))
    return Support::no("dtype=bf16 on " + dev.arch + ": its MFMA has no bf16_1k form (gfx90a and later)");
  if (p.out_dtype != p.dtype)
    return Support::no("out_dtype=" + std::string(dtype_name(p.out_dtype)) + " with dtype=" + std::string(dtype_name(p.dtype)) +
                       ": mma_bwd_amd feeds dO to the matrix unit in the input type (out_dtype == dtype)");
  if (p.d != p.dv) return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": mma_bwd_amd needs d == dv");
  if (std::find(std::begin(kAmdBwdDims), std::end(kAmdBwdDims), p.d) == std::end(kAmdBwdDims))
    return Support::no("d=" + std::to_string(p.d) + ": mma_bwd_amd is built for d in {64, 128}");
  if (p.hq > kMaxGridYZ || p.hkv > kMaxGridYZ || p.batch > kMaxGridYZ)
    return Support::no("batch=" + std::to_string(p.batch) + ", hq=" + std::to_string(p.hq) + ": grid.y/z limit " +
                       std::to_string(kMaxGridYZ));
  if (static_cast<std::int64_t>(p.sq) + p.sk > kMaxLen32)
    return Support::no("sq + sk = " + std::to_string(static_cast<std::int64_t>(p.sq) + p.sk) +
                       ": mma_bwd_amd keeps rows and keys in 32 bits (at most " + std::to_string(kMaxLen32) + ")");
  return Support::yes();
}

BackwardKernelInfo make_mma_bwd_amd_kernel() {
  BackwardKernelInfo k;
  k.name = "mma_bwd_amd";
  k.description =
      "tensor-core FlashAttention-2 backward on AMD driven by an atom (WMMA on gfx11/gfx12, MFMA 32x32x8 on CDNA), "
      "deterministic: dK/dV per key block, dQ in a separate pass over the key tiles in order, no atomics; f16/bf16, "
      "d = dv in {64, 128}";
  k.deterministic = true;
  k.supports = mma_bwd_amd_supports;
  k.workspace_bytes = [](const AttnProblem& p) { return backward_workspace_bytes(p, true); };
  k.launch = [](const AttnProblem& p, const BwdDeviceTensors& t, void* ws, Stream s) {
#if defined(FP_HAVE_GPU_RUNTIME) && defined(FP_VENDOR_HIP)
    const BwdParams bp = make_bwd_params(p, t, ws, true);
    static const std::string family = detail::mma_atom_family(require_device());  // one device per process
    if (p.d == 64) detail::launch_mma_bwd_amd<64>(bp, family, s);
    else if (p.d == 128) detail::launch_mma_bwd_amd<128>(bp, family, s);
    else throw UsageError("d=" + std::to_string(p.d) + ": mma_bwd_amd is built for d in {64, 128}");
#else
    (void)p, (void)t, (void)ws, (void)s;
    throw NoDevice("no AMD GPU backend in this build: mma_bwd_amd cannot launch");
#endif
  };
  return k;
}

}  // namespace flashprobe::kernels
