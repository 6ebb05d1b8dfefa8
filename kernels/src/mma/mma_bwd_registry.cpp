// mma_bwd / mma_bwd_det: their domain and launch (the kernels: src/mma/mma_bwd.cuh).
#include "src/mma/mma_bwd_registry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/bwd_params.h"
#include "src/mma/mma_bwd_launchers.h"
#include "src/mma/mma_bwd_smem.h"
#include "src/launchers.h"
#include "src/mma/mma_launchers.h"

namespace flashprobe::kernels {

Support mma_bwd_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (Support v = Support::valid(p); !v) return v;
  if (detail::mma_atom_family(dev) != "sm80")
    return Support::no("arch=" + (dev.arch.empty() ? std::string("none") : dev.arch) +
                       ": mma_bwd runs on NVIDIA sm_80 and later (mma.sync m16n8k16); tiled_bwd takes other devices");
  if (p.dtype == DType::f32) return Support::no("dtype=f32: mma_bwd reads f16 or bf16 inputs");
  if (p.out_dtype != p.dtype)
    return Support::no("out_dtype=" + std::string(dtype_name(p.out_dtype)) + " with dtype=" + std::string(dtype_name(p.dtype)) +
                       ": mma_bwd feeds dO to the matrix unit in the input type (out_dtype == dtype)");
  if (p.d != p.dv) return Support::no("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": mma_bwd needs d == dv");
  if (std::find(std::begin(detail::kMmaBwdDims), std::end(detail::kMmaBwdDims), p.d) == std::end(detail::kMmaBwdDims))
    return Support::no("d=" + std::to_string(p.d) + ": mma_bwd is built for d in {64, 128}");
  if (p.hq > kMaxGridYZ || p.hkv > kMaxGridYZ || p.batch > kMaxGridYZ)
    return Support::no("batch=" + std::to_string(p.batch) + ", hq=" + std::to_string(p.hq) + ": grid.y/z limit " +
                       std::to_string(kMaxGridYZ));
  if (static_cast<std::int64_t>(p.sq) + p.sk > kMaxLen32)
    return Support::no("sq + sk = " + std::to_string(static_cast<std::int64_t>(p.sq) + p.sk) + ": mma_bwd keeps rows and keys in 32 bits (at most " +
                       std::to_string(kMaxLen32) + ")");
  return Support::yes();
}

namespace {

// mma_bwd_k128_bulk's own terms: the bulk reduction (cp.reduce.async.bulk) exists from sm_90 on, and
// the shape is built at one head dim.
Support mma_bwd_bulk_supports(const DeviceInfo& dev, const AttnProblem& p) {
  if (detail::nvidia_sm(dev) < 90)
    return Support::no("arch=" + (dev.arch.empty() ? std::string("none") : dev.arch) +
                       ": mma_bwd_k128_bulk adds dQ with cp.reduce.async.bulk, sm_90 and later");
  if (p.d != kMmaBwdBulkDim)
    return Support::no("d=" + std::to_string(p.d) + ": mma_bwd_k128_bulk is built for d = " +
                       std::to_string(kMmaBwdBulkDim) + " only (at d = 128 its fp32 dQ staging would not fit)");
  return Support::yes();
}

}  // namespace

Support mma_bwd_fa2_preferred(const DeviceInfo& dev, const AttnProblem& p) {
  // Measured on the H100 in one call (kMmaBwdFa2Measured, the schedule adopted at 4c325b0): mma_bwd_fa2 took
  // 0.71-0.91x mma_bwd_det's time on all 20 quick shapes, d = 64 and 128, S = 1024, Whisper's 1500 and 4096,
  // with and without a causal mask (0.91x at d = 128, S = 1024, unmasked). Below S = 1024 it is not measured:
  // the table's order decides.
  if (detail::nvidia_sm(dev) != 90)
    return Support::no("arch=" + (dev.arch.empty() ? std::string("none") : dev.arch) +
                       ": mma_bwd_fa2 is measured faster on sm_90 (H100) only");
  const bool masked = p.causal != Causal::none || p.window_left >= 0 || p.window_right >= 0;
  const int s = std::min(p.sq, p.sk);
  if ((p.d != 64 && p.d != 128) || s < kMmaBwdFa2FromS)
    return Support::no("d=" + std::to_string(p.d) + ", min(sq, sk)=" + std::to_string(s) + (masked ? ", masked" : "") +
                       ": mma_bwd_fa2 is measured faster than mma_bwd_det at d = 64 and 128 from S = " +
                       std::to_string(kMmaBwdFa2FromS));
  Support yes = Support::yes();
  yes.reason = "d=" + std::to_string(p.d) + ", min(sq, sk)=" + std::to_string(s) + (masked ? ", masked" : "") +
               ": mma_bwd_fa2 measured faster than mma_bwd_det there on the H100 (" + kMmaBwdFa2Measured + ")";
  return yes;
}

BackwardKernelInfo make_mma_bwd_kernel(bool deterministic, MmaBwdShapeId shape) {
  const bool k128 = shape == MmaBwdShapeId::k128, bulk = shape == MmaBwdShapeId::k128_bulk, fa2 = mma_bwd_is_fa2(shape);
  if (bulk && deterministic) throw std::logic_error("mma_bwd_k128_bulk has no deterministic mode (it is an atomic dQ path)");
  BackwardKernelInfo k;
  k.name = std::string(deterministic ? "mma_bwd_det" : "mma_bwd") +
           (k128 ? "_k128" : bulk ? "_k128_bulk" : fa2 ? "_fa2" : "");
  const std::string blocks =
      fa2 ? std::string("FlashAttention-2's block: 128 keys x 128 (d = 64) or 64 (d = 128) queries, 8 warps split in two "
                        "dimensions per product, P and dS through shared memory") +
                (deterministic ? "" : ", paired dQ atomics") +
                " (measured on the H100)"
      : bulk ? "128-key blocks of 8 warps, dQ staged in shared memory and added with cp.reduce.async.bulk (sm_90, d = 64; "
             "compiled, not yet measured: never preferred)"
      : !k128 ? "64-key blocks of 4 warps"
              : std::string("128-key blocks of 8 warps") + (deterministic ? "" : ", paired dQ atomics") +
                    " (compiled, not yet measured: never preferred)";
  k.description = deterministic
                      ? "tensor-core FlashAttention-2 backward driven by an atom (mma.sync m16n8k16), deterministic: dQ "
                        "recomputed per query tile over the key tiles in order, no atomics; f16/bf16, d = dv in {64, 128}; " +
                            blocks
                      : "tensor-core FlashAttention-2 backward driven by an atom (mma.sync m16n8k16): dK/dV per key "
                        "block, dQ added across key blocks with fp32 atomics; f16/bf16, d = dv in {64, 128}; " +
                            blocks;
  k.deterministic = deterministic;
  // A device whose opt-in shared memory per block is known and too small for this shape's largest
  // block is refused with both numbers (an A100 allows 166912 bytes, sm_86/89 cards 101376).
  k.supports = [deterministic, shape, n = k.name](const DeviceInfo& dev, const AttnProblem& p) {
    if (Support s = mma_bwd_supports(dev, p); !s) return s;
    if (shape == MmaBwdShapeId::k128_bulk)
      if (Support s = mma_bwd_bulk_supports(dev, p); !s) return s;
    const int need = mma_bwd_smem_bytes(shape, deterministic, p.d);
    if (dev.smem_per_block_optin > 0 && need > dev.smem_per_block_optin)
      return Support::no(n + " at d=" + std::to_string(p.d) + " needs " + std::to_string(need) +
                         " bytes of shared memory per block; the device allows " + std::to_string(dev.smem_per_block_optin));
    return Support::yes();
  };
  k.workspace_bytes = [deterministic](const AttnProblem& p) { return backward_workspace_bytes(p, deterministic); };
  if (shape == MmaBwdShapeId::fa2 && !deterministic) k.preferred = mma_bwd_fa2_preferred;
  k.launch = [deterministic, k128, bulk, fa2, n = k.name](const AttnProblem& p, const BwdDeviceTensors& t,
                                                                             void* ws, Stream s) {
#if defined(FP_HAVE_GPU_RUNTIME) && !defined(FP_VENDOR_HIP)
    const BwdParams bp = make_bwd_params(p, t, ws, deterministic);
    if (p.d != 64 && p.d != 128) throw UsageError("d=" + std::to_string(p.d) + ": " + n + " is built for d in {64, 128}");
    if (bulk) {
      if (p.d != kMmaBwdBulkDim)
        throw UsageError("d=" + std::to_string(p.d) + ": " + n + " is built for d = " + std::to_string(kMmaBwdBulkDim));
      detail::launch_mma_bwd_k128_bulk_nvidia_d64(bp, s);
    } else if (fa2) {
      if (p.d == 64) detail::launch_mma_bwd_fa2_nvidia<64>(bp, deterministic, s);
      else detail::launch_mma_bwd_fa2_nvidia<128>(bp, deterministic, s);
    } else if (k128) {
      if (p.d == 64) detail::launch_mma_bwd_k128_nvidia<64>(bp, deterministic, s);
      else detail::launch_mma_bwd_k128_nvidia<128>(bp, deterministic, s);
    } else {
      if (p.d == 64) detail::launch_mma_bwd_nvidia<64, Bug::none>(bp, deterministic, s);
      else detail::launch_mma_bwd_nvidia<128, Bug::none>(bp, deterministic, s);
    }
#else
    (void)p, (void)t, (void)ws, (void)s, (void)deterministic, (void)k128, (void)bulk, (void)fa2;
    throw NoDevice("no NVIDIA GPU backend in this build: " + n + " cannot launch");
#endif
  };
  return k;
}

}  // namespace flashprobe::kernels
