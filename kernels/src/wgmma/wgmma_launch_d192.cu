// The wgmma kernel's launch in the 192/192 tile class (kWgmmaFineDimClasses, the variant wgmma/classes=fine:
// three 64-dim chunks with the 128-byte swizzle, O as m64n192k16, three K/V stages of 64 keys; wgmma_config.h),
// f16 and bf16, with and without soft-cap/ALiBi: a translation unit of its own, so that its instantiations build
// beside the other classes' (wgmma_launch.cu builds 192/128, the class of the same Q/K width).
// Compiled for sm_90a only (kernels/CMakeLists.txt).
#include "src/wgmma/wgmma_launch.cuh"

namespace flashprobe::kernels::detail {
template <>
void launch_wgmma_class<192, 192>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<192, 192>(p, s, o);
}
}  // namespace flashprobe::kernels::detail
