// The AMD tensor-core backward's launch (the kernels: mma_bwd_amd.cuh): the row term, the dK/dV
// kernel, then the deterministic dQ kernel, with the atom of the device's family. As the forward
// (mma_amd.cu), every instantiation is compiled for every AMD target of the build; those whose atom
// does not exist on a target compile to a trap, and the registry only picks the device's own family.
#include "flashprobe/atoms/amd_matrix.cuh"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "src/mma/mma_bwd_amd.cuh"
#include "src/mma/mma_bwd_amd_launchers.h"
#include "src/mma/mma_bwd_amd_plan.h"

namespace flashprobe::kernels::detail {

template <class Atom, class E, int D>
void launch_bwd_amd_atom(const BwdParams& bp, Stream s) {
  const Params& p = bp.f;
  using C = dev::AmdBwdConfig<Atom, D, amd_bwd_tile(D)>;
  static_assert(C::kBc == kAmdBwdBlock, "the plan's block is the kernels'");
  if (static_cast<std::int64_t>(p.sq) + p.sk > kMaxLen32)
    throw UsageError("mma_bwd_amd: sq=" + std::to_string(p.sq) + ", sk=" + std::to_string(p.sk) +
                     ": sq + sk must be at most " + std::to_string(kMaxLen32) + " (32-bit indices)");
  const std::int64_t rows = std::int64_t{p.batch} * p.hq * p.sq;
  if (rows > 0) {
    dev::bwd_rowdot<Bug::none><<<static_cast<unsigned>((rows + kAmdBwdRowdotThreads - 1) / kAmdBwdRowdotThreads),
                                 kAmdBwdRowdotThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("bwd_rowdot");
  }
  if (p.sk > 0) {
    const dim3 grid(static_cast<unsigned>((p.sk + C::kBc - 1) / C::kBc), static_cast<unsigned>(p.hkv),
                    static_cast<unsigned>(p.batch));
    dev::amd_bwd_dkdv<Atom, E, D, amd_bwd_tile(D)><<<grid, C::kThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("amd_bwd_dkdv");
  }
  if (rows > 0) {
    const dim3 grid(static_cast<unsigned>((p.sq + C::kBc - 1) / C::kBc), static_cast<unsigned>(p.hq),
                    static_cast<unsigned>(p.batch));
    dev::amd_bwd_dq<Atom, E, D, amd_bwd_tile(D)><<<grid, C::kThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("amd_bwd_dq");
  }
}

template <class AtomF16, class AtomBF16, int D>
void launch_bwd_amd_pair(const BwdParams& bp, Stream s) {
  if (bp.f.dtype == DType::bf16) launch_bwd_amd_atom<AtomBF16, dev::BF16, D>(bp, s);
  else launch_bwd_amd_atom<AtomF16, dev::F16, D>(bp, s);
}

template <int D>
void launch_mma_bwd_amd(const BwdParams& bp, const std::string& family, Stream s) {
  if (family == "gfx11")
    launch_bwd_amd_pair<atoms::GFX11_WMMA_16x16x16_F32F16_W32, atoms::GFX11_WMMA_16x16x16_F32BF16_W32, D>(bp, s);
  else if (family == "gfx12")
    launch_bwd_amd_pair<atoms::GFX12_WMMA_16x16x16_F32F16_W32, atoms::GFX12_WMMA_16x16x16_F32BF16_W32, D>(bp, s);
  else if (family == "cdna")
    launch_bwd_amd_pair<atoms::CDNA_MFMA_32x32x8_F32F16, atoms::CDNA_MFMA_32x32x8_F32BF16_1K, D>(bp, s);
  else
    throw UsageError("mma_bwd_amd: no AMD atom for architecture family '" + family + "' (known: gfx11, gfx12, cdna)");
}

template void launch_mma_bwd_amd<64>(const BwdParams&, const std::string&, Stream);
template void launch_mma_bwd_amd<128>(const BwdParams&, const std::string&, Stream);

}  // namespace flashprobe::kernels::detail
