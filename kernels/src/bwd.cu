// The production instantiation of the backward kernels (Bug::none); mutants instantiate them in
// kernels/mutants/mutants_bwd.cu.
#include "src/bwd.cuh"

namespace flashprobe::kernels::detail {
template void launch_backward<Bug::none>(const BwdParams&, bool, Stream);
}
