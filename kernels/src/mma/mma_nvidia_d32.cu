// The NVIDIA mma kernel (mma.sync m16n8k16) in the 32/32 tile class of the fine ladder (registry.h:
// kMmaFineDimClasses; the general instantiation only), f16 and bf16 (one class per translation unit).
#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_launch.cuh"
#include "src/mma/mma_launchers.h"

namespace flashprobe::kernels::detail {
template <>
void launch_mma_nvidia<32>(const Params& p, Stream s, const MmaOptions& o) {
  if (p.dtype == DType::bf16) launch_mma_atom<atoms::SM80_16x8x16_F32BF16BF16F32_TN, dev::BF16, 32>(p, s, o);
  else launch_mma_atom<atoms::SM80_16x8x16_F32F16F16F32_TN, dev::F16, 32>(p, s, o);
}
}  // namespace flashprobe::kernels::detail
