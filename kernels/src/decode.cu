// The production instantiation of decode (Bug::none); mutants instantiate it in kernels/mutants/.
#include "src/decode.cuh"
#include "src/launchers.h"

namespace flashprobe::kernels::detail {
template void launch_decode<Bug::none>(const Params&, int, void*, Stream);
}
