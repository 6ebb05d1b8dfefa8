// decode/mma=on's split kernel (src/decode_mma.cuh), NVIDIA only: the launcher in decode.cu sends the
// problems it takes here and the others to decode's split kernel.
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/decode_mma.cuh"
#include "src/launchers.h"

namespace flashprobe::kernels::detail {
namespace {
template <class E, int D>
void launch_mma_split(const Params& p, int splits, int chunk, dev::DecodeWorkspace ws, Stream s) {
  constexpr int smem = dev::DecodeMmaConfig<E, D>::kSmemBytes;
  auto* kernel = dev::decode_split_mma<E, D>;
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
  if (std::max(p.d, p.dv) <= 64) launch_mma_split<E, 64>(p, splits, chunk, ws, s);
  else launch_mma_split<E, 128>(p, splits, chunk, ws, s);
}
}  // namespace

void launch_decode_mma_split(const Params& p, int splits, int chunk, float* partial_o, float* partial_lse, Stream s) {
  const dev::DecodeWorkspace ws{partial_o, partial_lse};
  if (p.dtype == DType::bf16) launch_mma_split<dev::BF16>(p, splits, chunk, ws, s);
  else launch_mma_split<dev::F16>(p, splits, chunk, ws, s);
}
}  // namespace flashprobe::kernels::detail
