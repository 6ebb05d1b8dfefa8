#pragma once
// Host entry points of the tensor-core backward (mma_bwd, mma_bwd_det): one per head dim, NVIDIA
// mma.sync m16n8k16 (sm_80+). `bug` is Bug::none in the production library; the mutants instantiate
// their own at kMutantMmaBwdDim in the atomic mode only.
#include "flashprobe/kernels/bug.h"
#include "flashprobe/kernels/registry.h"
#include "src/bwd_params.h"

namespace flashprobe::kernels::detail {

template <int D, Bug bug>
void launch_mma_bwd_nvidia(const BwdParams& p, bool deterministic, Stream s);
// The 128-key shape (MmaBwdK128), Bug::none: mma_bwd_k128 and mma_bwd_det_k128.
template <int D>
void launch_mma_bwd_k128_nvidia(const BwdParams& p, bool deterministic, Stream s);
// MmaBwdK128Bulk, fast mode, d = 64 only (at d = 128 its two fp32 staging tiles would not fit beside
// the k128 tiles): mma_bwd_k128_bulk.
void launch_mma_bwd_k128_bulk_nvidia_d64(const BwdParams& p, Stream s);
// FlashAttention-2's block (MmaBwdFa2), Bug::none: mma_bwd_fa2 and mma_bwd_det_fa2.
template <int D>
void launch_mma_bwd_fa2_nvidia(const BwdParams& p, bool deterministic, Stream s);

// The head dims mma_bwd is built for (d == dv).
inline constexpr int kMmaBwdDims[] = {64, 128};
inline constexpr int kMutantMmaBwdDim = 64;

}  // namespace flashprobe::kernels::detail
