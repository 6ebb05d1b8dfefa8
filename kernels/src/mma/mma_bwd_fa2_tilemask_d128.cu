// mma_bwd_fa2's fast-mode schedule variants (mma_bwd_fa2.cuh's knobs) for D = Dv = 128, f16 and bf16:
// mma_bwd_fa2_tilemask, mma_bwd_fa2_tilemask_cprows and mma_bwd_fa2_tilemask_lean.
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_bwd_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_mma_bwd_fa2_tilemask_nvidia<128>(const BwdParams& p, Fa2Schedule schedule, Stream s) {
  using F = atoms::SM80_16x8x16_F32F16F16F32_TN;
  using B = atoms::SM80_16x8x16_F32BF16BF16F32_TN;
  switch (schedule) {
    case Fa2Schedule::tilemask: launch_mma_bwd_pair<F, B, 128, Bug::none, false, MmaBwdFa2TileMask>(p, s); break;
    case Fa2Schedule::tilemask_cprows: launch_mma_bwd_pair<F, B, 128, Bug::none, false, MmaBwdFa2TileMaskCpRows>(p, s); break;
    case Fa2Schedule::tilemask_lean: launch_mma_bwd_pair<F, B, 128, Bug::none, false, MmaBwdFa2TileMaskLean>(p, s); break;
  }
}
}  // namespace flashprobe::kernels::detail
