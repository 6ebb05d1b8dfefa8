// The tensor-core backward (mma.sync m16n8k16) for D = Dv = 128, f16 and bf16, both modes.
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_bwd_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_mma_bwd_nvidia<128, Bug::none>(const BwdParams& p, bool deterministic, Stream s) {
  using F = atoms::SM80_16x8x16_F32F16F16F32_TN;
  using B = atoms::SM80_16x8x16_F32BF16BF16F32_TN;
  if (deterministic) launch_mma_bwd_pair<F, B, 128, Bug::none, true>(p, s);
  else launch_mma_bwd_pair<F, B, 128, Bug::none, false>(p, s);
}
}  // namespace flashprobe::kernels::detail
