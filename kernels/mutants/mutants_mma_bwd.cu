// mma_bwd mutants (test binaries only): the atomic mode at kMutantMmaBwdDim, f16 and bf16.
#include "flashprobe/atoms/sm80_mma.cuh"
#include "flashprobe/core/error.h"
#include "src/mma/mma_bwd_launch.cuh"

namespace flashprobe::kernels::detail {
namespace {
template <Bug bug>
void mutant_launch(const BwdParams& p, bool deterministic, Stream s) {
  if (deterministic) throw UsageError("mma_bwd mutants are built for the atomic mode only");
  launch_mma_bwd_pair<atoms::SM80_16x8x16_F32F16F16F32_TN, atoms::SM80_16x8x16_F32BF16BF16F32_TN, kMutantMmaBwdDim, bug,
                      false>(p, s);
}
}  // namespace
template <>
void launch_mma_bwd_nvidia<kMutantMmaBwdDim, Bug::bwd_mma_no_rowsum_d>(const BwdParams& p, bool det, Stream s) {
  mutant_launch<Bug::bwd_mma_no_rowsum_d>(p, det, s);
}
template <>
void launch_mma_bwd_nvidia<kMutantMmaBwdDim, Bug::bwd_mma_gqa_unsummed>(const BwdParams& p, bool det, Stream s) {
  mutant_launch<Bug::bwd_mma_gqa_unsummed>(p, det, s);
}
template <>
void launch_mma_bwd_nvidia<kMutantMmaBwdDim, Bug::bwd_mma_softcap_grad_missing>(const BwdParams& p, bool det, Stream s) {
  mutant_launch<Bug::bwd_mma_softcap_grad_missing>(p, det, s);
}
template <>
void launch_mma_bwd_nvidia<kMutantMmaBwdDim, Bug::bwd_mma_causal_missing>(const BwdParams& p, bool det, Stream s) {
  mutant_launch<Bug::bwd_mma_causal_missing>(p, det, s);
}
}  // namespace flashprobe::kernels::detail
