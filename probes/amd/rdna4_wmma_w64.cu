// RDNA4 (gfx12) WMMA experiment kernels, wave64 (compiled with -mwavefrontsize64, see
// rdna3_wmma_w64.cu for why); other targets compile to the trap path.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"
#include "flashprobe/probes/amd/rdna4_wmma.cuh"

namespace flashprobe::probes::amd {
namespace {
using namespace fp_amd;
static_assert(agrees_with_table<Gfx12WmmaF32F16W64>());
static_assert(agrees_with_table<Gfx12WmmaF32BF16W64>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {entry<Gfx12WmmaF32F16W64>(), entry<Gfx12WmmaF32BF16W64>()};
}  // namespace

std::span<const AmdAtomLauncher> rdna4_wmma_w64_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
