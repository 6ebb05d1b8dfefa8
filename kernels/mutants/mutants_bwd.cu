// Backward kernel mutants (test binaries only).
#include "src/bwd.cuh"

namespace flashprobe::kernels::detail {
template void launch_backward<Bug::bwd_no_rowsum_d>(const BwdParams&, bool, Stream);
template void launch_backward<Bug::bwd_gqa_unsummed>(const BwdParams&, bool, Stream);
template void launch_backward<Bug::bwd_softcap_grad_missing>(const BwdParams&, bool, Stream);
template void launch_backward<Bug::bwd_causal_missing>(const BwdParams&, bool, Stream);
template void launch_backward<Bug::bwd_dq_race>(const BwdParams&, bool, Stream);
}
