// decode mutants (test binaries only).
#include "src/decode.cuh"
#include "src/launchers.h"

namespace flashprobe::kernels::detail {
template void launch_decode<Bug::kv_offset_ignored>(const Params&, int, void*, Stream);
template void launch_decode<Bug::combine_skips_empty>(const Params&, int, void*, Stream);
template void launch_decode<Bug::split_odd_dropped>(const Params&, int, void*, Stream);
}
