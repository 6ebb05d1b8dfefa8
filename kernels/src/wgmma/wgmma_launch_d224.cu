// The wgmma kernel's launch in the 224/224 tile class (kWgmmaFineDimClasses, the variant wgmma/classes=fine:
// rows of 32-dim chunks with the 64-byte swizzle, three K/V stages of 64 keys; wgmma_config.h), f16 and bf16, with and without soft-cap/ALiBi: a translation unit of its
// own, so that its instantiations build beside the other classes' (wgmma_launch.cu).
// Compiled for sm_90a only (kernels/CMakeLists.txt).
#include "src/wgmma/wgmma_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_wgmma_class<224, 224>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<224, 224>(p, s, o);
}
}  // namespace flashprobe::kernels::detail
