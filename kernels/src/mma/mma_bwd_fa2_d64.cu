// The tensor-core backward in FlashAttention-2's block (MmaBwdFa2: two-dimensional wave split, P^T and
// dS^T through shared memory) for D = Dv = 64, f16 and bf16, both modes: mma_bwd_fa2 and mma_bwd_det_fa2.
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_bwd_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_mma_bwd_fa2_nvidia<64>(const BwdParams& p, bool deterministic, Stream s) {
  using F = atoms::SM80_16x8x16_F32F16F16F32_TN;
  using B = atoms::SM80_16x8x16_F32BF16BF16F32_TN;
  if (deterministic) launch_mma_bwd_pair<F, B, 64, Bug::none, true, MmaBwdFa2>(p, s);
  else launch_mma_bwd_pair<F, B, 64, Bug::none, false, MmaBwdFa2>(p, s);
}
}  // namespace flashprobe::kernels::detail
