// The wgmma kernel's launch in the 160/160 tile class (kWgmmaDimClasses: rows of 32-dim chunks with
// the 64-byte swizzle, two K/V stages of 128 keys; wgmma_config.h), f16 and bf16, with and without soft-cap/ALiBi: a translation unit of its
// own, so that its instantiations build beside the other classes' (wgmma_launch.cu).
// Compiled for sm_90a only (kernels/CMakeLists.txt).
#include "src/wgmma/wgmma_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_wgmma_class<160, 160>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<160, 160>(p, s, o);
}
}  // namespace flashprobe::kernels::detail
