// The tensor-core backward in 128-key blocks with the bulk dQ reduction (MmaBwdK128Bulk: dQ staged
// in shared memory in fp32, added to the workspace with cp.reduce.async.bulk on sm_90) for
// D = Dv = 64, f16 and bf16, fast mode only: mma_bwd_k128_bulk.
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_bwd_launch.cuh"

namespace flashprobe::kernels::detail {
void launch_mma_bwd_k128_bulk_nvidia_d64(const BwdParams& p, Stream s) {
  using F = atoms::SM80_16x8x16_F32F16F16F32_TN;
  using B = atoms::SM80_16x8x16_F32BF16BF16F32_TN;
  launch_mma_bwd_pair<F, B, 64, Bug::none, false, MmaBwdK128Bulk>(p, s);
}
}  // namespace flashprobe::kernels::detail
