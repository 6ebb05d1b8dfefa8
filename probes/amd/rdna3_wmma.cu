// RDNA3 (gfx11) WMMA experiment kernels, wave32: compiled as a wave32 code object on gfx11 (the
// RDNA default); on other targets (gfx12, CDNA) every kernel here compiles to the trap path.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"

namespace flashprobe::probes::amd {
namespace {
using namespace flashprobe::atoms;
using fp_amd::agrees_with_table;
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F32F16_W32>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F32BF16_W32>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F16F16_W32_OPSEL<false>>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F16F16_W32_OPSEL<true>>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL<false>>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL<true>>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &fp_amd::launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<GFX11_WMMA_16x16x16_F32F16_W32>(),
    entry<GFX11_WMMA_16x16x16_F32BF16_W32>(),
    entry<GFX11_WMMA_16x16x16_F16F16_W32_OPSEL<false>>(),
    entry<GFX11_WMMA_16x16x16_F16F16_W32_OPSEL<true>>(),
    entry<GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL<false>>(),
    entry<GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL<true>>(),
};
}  // namespace

std::span<const AmdAtomLauncher> rdna3_wmma_w32_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
