// The wgmma kernel's launch in the 256/256 tile class (kWgmmaDimClasses: 64 keys per tile, two K/V
// stages; wgmma_config.h), f16 and bf16, with and without soft-cap/ALiBi: a translation unit of its
// own, so that its instantiations build beside the other classes' (wgmma_launch.cu).
// Compiled for sm_90a only (kernels/CMakeLists.txt).
#include "src/wgmma/wgmma_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_wgmma_class<256, 256>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<256, 256>(p, s, o);
}
}  // namespace flashprobe::kernels::detail
