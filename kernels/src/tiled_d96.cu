// The production instantiation of tiled for D = Dv = 96 (one dim per translation unit: parallel builds).
#include "src/launchers.h"
#include "src/tiled.cuh"

namespace flashprobe::kernels::detail {
template void launch_tiled<Bug::none, 96>(const Params&, Stream);
}
