// The AMD mma kernel: gfx11 WMMA (wave32, A/B replicated in lanes 16-31), gfx12 WMMA and CDNA MFMA
// 32x32x8, f16 and bf16. Every instantiation is compiled for every AMD target of the build; the ones
// whose atom does not exist on a target compile to a trap, and the dispatcher only picks the atom of
// the device's own family (and only when this binary carries that target).
#include "flashprobe/atoms/amd_matrix.cuh"
#include "flashprobe/core/error.h"
#include "src/mma/mma_launch.cuh"
#include "src/mma/mma_launchers.h"

namespace flashprobe::kernels::detail {

template <class AtomF16, class AtomBF16, int D>
void launch_pair(const Params& p, Stream s, const MmaOptions& o) {
  if (p.dtype == DType::bf16) launch_mma_atom<AtomBF16, dev::BF16, D>(p, s, o);
  else launch_mma_atom<AtomF16, dev::F16, D>(p, s, o);
}

template <int D>
void launch_mma_amd(const Params& p, const std::string& family, Stream s, const MmaOptions& o) {
  if (family == "gfx11") {
    launch_pair<atoms::GFX11_WMMA_16x16x16_F32F16_W32, atoms::GFX11_WMMA_16x16x16_F32BF16_W32, D>(p, s, o);
  } else if (family == "gfx12") {
    launch_pair<atoms::GFX12_WMMA_16x16x16_F32F16_W32, atoms::GFX12_WMMA_16x16x16_F32BF16_W32, D>(p, s, o);
  } else if (family == "cdna") {
    if constexpr (D % 32 == 0)
      launch_pair<atoms::CDNA_MFMA_32x32x8_F32F16, atoms::CDNA_MFMA_32x32x8_F32BF16_1K, D>(p, s, o);
    else
      throw UsageError("d=" + std::to_string(D) + ": the CDNA mma kernel needs d % 32 == 0 (MFMA 32x32x8)");
  } else {
    throw UsageError("mma: no AMD atom for architecture family '" + family + "' (known: gfx11, gfx12, cdna)");
  }
}

template void launch_mma_amd<64>(const Params&, const std::string&, Stream, const MmaOptions&);
template void launch_mma_amd<80>(const Params&, const std::string&, Stream, const MmaOptions&);
template void launch_mma_amd<96>(const Params&, const std::string&, Stream, const MmaOptions&);
template void launch_mma_amd<128>(const Params&, const std::string&, Stream, const MmaOptions&);
template void launch_mma_amd<256>(const Params&, const std::string&, Stream, const MmaOptions&);

}  // namespace flashprobe::kernels::detail
