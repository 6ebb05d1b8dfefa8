// The tensor-core backward in 128-key blocks of 8 warps (MmaBwdK128: paired dQ atomics, deferred dQ)
// for D = Dv = 128, f16 and bf16, both modes: mma_bwd_k128 and mma_bwd_det_k128.
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_bwd_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_mma_bwd_k128_nvidia<128>(const BwdParams& p, bool deterministic, Stream s) {
  using F = atoms::SM80_16x8x16_F32F16F16F32_TN;
  using B = atoms::SM80_16x8x16_F32BF16BF16F32_TN;
  if (deterministic) launch_mma_bwd_pair<F, B, 128, Bug::none, true, MmaBwdK128>(p, s);
  else launch_mma_bwd_pair<F, B, 128, Bug::none, false, MmaBwdK128>(p, s);
}
}  // namespace flashprobe::kernels::detail
