// ref3pass mutants (test binaries only).
#include "src/launchers.h"
#include "src/ref3pass.cuh"

namespace flashprobe::kernels::detail {
template void launch_ref3pass<Bug::softmax_block_not_pow2>(const Params&, void*, Stream);
template void launch_ref3pass<Bug::bf16_truncate>(const Params&, void*, Stream);
}
