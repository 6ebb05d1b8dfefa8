// RDNA3 (gfx11) WMMA experiment kernels, wave64. The build compiles this file with
// -mwavefrontsize64 (probes/amd/CMakeLists.txt, cmake/AmdDeviceCode.cmake): on RDNA the wave size
// belongs to the code object, so wave64 atoms cannot share a translation unit with wave32 ones.
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"
#include "flashprobe/probes/amd/rdna3_wmma.cuh"

namespace flashprobe::probes::amd {
namespace {
using namespace fp_amd;
static_assert(agrees_with_table<Gfx11WmmaF32F16W64>());
static_assert(agrees_with_table<Gfx11WmmaF32BF16W64>());
static_assert(agrees_with_table<Gfx11WmmaF16F16W64<false>>());
static_assert(agrees_with_table<Gfx11WmmaF16F16W64<true>>());
static_assert(agrees_with_table<Gfx11WmmaBF16BF16W64<false>>());
static_assert(agrees_with_table<Gfx11WmmaBF16BF16W64<true>>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<Gfx11WmmaF32F16W64>(),          entry<Gfx11WmmaF32BF16W64>(),
    entry<Gfx11WmmaF16F16W64<false>>(),   entry<Gfx11WmmaF16F16W64<true>>(),
    entry<Gfx11WmmaBF16BF16W64<false>>(), entry<Gfx11WmmaBF16BF16W64<true>>(),
};
}  // namespace

std::span<const AmdAtomLauncher> rdna3_wmma_w64_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
