// RDNA3 (gfx11) WMMA experiment kernels, wave64. The build compiles this file with
// -mwavefrontsize64 (probes/amd/CMakeLists.txt, cmake/AmdDeviceCode.cmake): on RDNA the wave size
// belongs to the code object, so wave64 atoms cannot share a translation unit with wave32 ones.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"

namespace flashprobe::probes::amd {
namespace {
using namespace flashprobe::atoms;
using fp_amd::agrees_with_table;
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F32F16_W64>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F32BF16_W64>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F16F16_W64_OPSEL<false>>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_F16F16_W64_OPSEL<true>>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL<false>>());
static_assert(agrees_with_table<GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL<true>>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &fp_amd::launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<GFX11_WMMA_16x16x16_F32F16_W64>(),
    entry<GFX11_WMMA_16x16x16_F32BF16_W64>(),
    entry<GFX11_WMMA_16x16x16_F16F16_W64_OPSEL<false>>(),
    entry<GFX11_WMMA_16x16x16_F16F16_W64_OPSEL<true>>(),
    entry<GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL<false>>(),
    entry<GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL<true>>(),
};
}  // namespace

std::span<const AmdAtomLauncher> rdna3_wmma_w64_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
