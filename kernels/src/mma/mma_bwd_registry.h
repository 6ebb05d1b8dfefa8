#pragma once
// The tensor-core backward's registry entries (mma_bwd, mma_bwd_det): which devices and problems they
// take (host code, every build) and their launch.
#include "flashprobe/kernels/backward.h"

namespace flashprobe::kernels {

Support mma_bwd_supports(const DeviceInfo& dev, const AttnProblem& p);
// The dK/dV kernel's shape (mma_bwd_launch.cuh): shipped (64-key blocks: mma_bwd, mma_bwd_det),
// FlashAttention-2's 128-key blocks (mma_bwd_k128, mma_bwd_det_k128), or those with the bulk dQ
// reduction (mma_bwd_k128_bulk: fast mode, d = 64, sm_90 and later), or FlashAttention-2's block with
// its two-dimensional wave split (mma_bwd_fa2, mma_bwd_det_fa2: mma_bwd_fa2_plan.h).
enum class MmaBwdShapeId { shipped, k128, k128_bulk, fa2 };
// The shapes whose dK/dV block is MmaBwdFa2Plan's.
constexpr bool mma_bwd_is_fa2(MmaBwdShapeId s) {
  return s == MmaBwdShapeId::fa2;
}
// Where the fast-mode dispatcher takes mma_bwd_fa2 ahead of the table's order (its `preferred`): on sm_90,
// d = 64 or 128 with min(sq, sk) >= kMmaBwdFa2FromS, any mask: where it was measured faster than mma_bwd_det
// (kMmaBwdFa2Measured).
inline constexpr int kMmaBwdFa2FromS = 1024;
inline constexpr const char* kMmaBwdFa2Measured = "reports/data/h100-80gb-hbm3/2026-11-27-bwd-fa2-adopt-77b9f2d";
Support mma_bwd_fa2_preferred(const DeviceInfo& dev, const AttnProblem& p);
// `launch` runs Bug::none; the mutants replace it.
BackwardKernelInfo make_mma_bwd_kernel(bool deterministic, MmaBwdShapeId shape = MmaBwdShapeId::shipped);
// mma_bwd_amd (mma_bwd_amd_registry.cpp): AMD WMMA/MFMA, deterministic.
Support mma_bwd_amd_supports(const DeviceInfo& dev, const AttnProblem& p);
BackwardKernelInfo make_mma_bwd_amd_kernel();

}  // namespace flashprobe::kernels
