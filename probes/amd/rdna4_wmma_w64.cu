// RDNA4 (gfx12) WMMA experiment kernels, wave64 (compiled with -mwavefrontsize64, see
// rdna3_wmma_w64.cu for why); other targets compile to the trap path.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"

namespace flashprobe::probes::amd {
namespace {
using namespace flashprobe::atoms;
using fp_amd::agrees_with_table;
static_assert(agrees_with_table<GFX12_WMMA_16x16x16_F32F16_W64>());
static_assert(agrees_with_table<GFX12_WMMA_16x16x16_F32BF16_W64>());
static_assert(agrees_with_table<GFX12_WMMA_16x16x16_F32E4M3_W64>());
static_assert(agrees_with_table<GFX12_WMMA_16x16x16_F32E4M3E5M2_W64>());
static_assert(agrees_with_table<GFX12_WMMA_16x16x16_F32E5M2E4M3_W64>());
static_assert(agrees_with_table<GFX12_WMMA_16x16x16_F32E5M2_W64>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &fp_amd::launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<GFX12_WMMA_16x16x16_F32F16_W64>(),
    entry<GFX12_WMMA_16x16x16_F32BF16_W64>(),
    entry<GFX12_WMMA_16x16x16_F32E4M3_W64>(),
    entry<GFX12_WMMA_16x16x16_F32E4M3E5M2_W64>(),
    entry<GFX12_WMMA_16x16x16_F32E5M2E4M3_W64>(),
    entry<GFX12_WMMA_16x16x16_F32E5M2_W64>(),
};
}  // namespace

std::span<const AmdAtomLauncher> rdna4_wmma_w64_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
