// decode/mma=on's split kernel (src/decode_mma.cuh), NVIDIA only: the launcher in decode.cu sends the
// problems it takes here (aligned rows by cp.async, others element by element into the same tiles) and
// the others to decode's split kernel.
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/decode_mma.cuh"
#include "src/launchers.h"

namespace flashprobe::kernels::detail {
namespace {
template <class E, int D, bool kVec>
void launch_mma_split(const Params& p, int splits, int chunk, dev::DecodeWorkspace ws, Stream s) {
  constexpr int smem = dev::DecodeMmaConfig<E, D>::kSmemBytes;
  auto* kernel = dev::decode_split_mma<E, D, kVec>;
  if constexpr (smem > 48 * 1024) {
    static const bool raised = [&] {  // once per instantiation (the attribute is per function)
      FP_CHECK(fp_rt::set_max_dynamic_smem(kernel, smem));
      return true;
    }();
    (void)raised;
  }
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(p.hkv), static_cast<unsigned>(p.batch));
  kernel<<<grid, kDecodeThreads, smem, s>>>(p, splits, chunk, ws);
}
template <class E>
void launch_mma_split(const Params& p, int splits, int chunk, dev::DecodeWorkspace ws, Stream s) {
  const bool vec = dev::rows_16b(p.k, p.ks, p.batch, p.sk, p.hkv, p.d) && dev::rows_16b(p.v, p.vs, p.batch, p.sk, p.hkv, p.dv);
  if (std::max(p.d, p.dv) <= 64) {
    if (vec) launch_mma_split<E, 64, true>(p, splits, chunk, ws, s);
    else launch_mma_split<E, 64, false>(p, splits, chunk, ws, s);
  } else {
    if (vec) launch_mma_split<E, 128, true>(p, splits, chunk, ws, s);
    else launch_mma_split<E, 128, false>(p, splits, chunk, ws, s);
  }
}
}  // namespace

void launch_decode_mma_split(const Params& p, int splits, int chunk, float* partial_o, float* partial_lse, Stream s) {
  const dev::DecodeWorkspace ws{partial_o, partial_lse};
  if (p.dtype == DType::bf16) launch_mma_split<dev::BF16>(p, splits, chunk, ws, s);
  else launch_mma_split<dev::F16>(p, splits, chunk, ws, s);
}
}  // namespace flashprobe::kernels::detail
