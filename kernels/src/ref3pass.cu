// The production instantiation of ref3pass (Bug::none); mutants instantiate it in kernels/mutants/.
#include "src/launchers.h"
#include "src/ref3pass.cuh"

namespace flashprobe::kernels::detail {
template void launch_ref3pass<Bug::none>(const Params&, void*, Stream);
}
