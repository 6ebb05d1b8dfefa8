// RDNA4 (gfx12) WMMA experiment kernels, wave32; other targets compile to the trap path.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"
#include "flashprobe/probes/amd/rdna4_wmma.cuh"

namespace flashprobe::probes::amd {
namespace {
using namespace fp_amd;
static_assert(agrees_with_table<Gfx12WmmaF32F16W32>());
static_assert(agrees_with_table<Gfx12WmmaF32BF16W32>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {entry<Gfx12WmmaF32F16W32>(), entry<Gfx12WmmaF32BF16W32>()};
}  // namespace

std::span<const AmdAtomLauncher> rdna4_wmma_w32_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
