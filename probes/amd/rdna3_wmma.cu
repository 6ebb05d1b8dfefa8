// RDNA3 (gfx11) WMMA experiment kernels, wave32: compiled as a wave32 code object on gfx11 (the
// RDNA default); on other targets (gfx12, CDNA) every kernel here compiles to the trap path.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"
#include "flashprobe/probes/amd/rdna3_wmma.cuh"

namespace flashprobe::probes::amd {
namespace {
using namespace fp_amd;
static_assert(agrees_with_table<Gfx11WmmaF32F16W32>());
static_assert(agrees_with_table<Gfx11WmmaF32BF16W32>());
static_assert(agrees_with_table<Gfx11WmmaF16F16W32<false>>());
static_assert(agrees_with_table<Gfx11WmmaF16F16W32<true>>());
static_assert(agrees_with_table<Gfx11WmmaBF16BF16W32<false>>());
static_assert(agrees_with_table<Gfx11WmmaBF16BF16W32<true>>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<Gfx11WmmaF32F16W32>(),          entry<Gfx11WmmaF32BF16W32>(),
    entry<Gfx11WmmaF16F16W32<false>>(),   entry<Gfx11WmmaF16F16W32<true>>(),
    entry<Gfx11WmmaBF16BF16W32<false>>(), entry<Gfx11WmmaBF16BF16W32<true>>(),
};
}  // namespace

std::span<const AmdAtomLauncher> rdna3_wmma_w32_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
