// CDNA MFMA experiment kernels (wave64). gfx908 lacks the bf16 "_1k" forms and only gfx940/941/942
// have the FNUZ fp8 form: those kernels compile to the trap path there, and the host never
// launches them (amd_atom_runs_on).
#include "flashprobe/probes/amd/cdna_mfma.cuh"
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"

namespace flashprobe::probes::amd {
namespace {
using namespace fp_amd;
static_assert(agrees_with_table<CdnaMfma32x32x8F32F16>());
static_assert(agrees_with_table<CdnaMfma16x16x16F32F16>());
static_assert(agrees_with_table<CdnaMfma32x32x8F32BF16>());
static_assert(agrees_with_table<CdnaMfma16x16x16F32BF16>());
static_assert(agrees_with_table<Cdna3Mfma16x16x32F32Fp8>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<CdnaMfma32x32x8F32F16>(),   entry<CdnaMfma16x16x16F32F16>(),  entry<CdnaMfma32x32x8F32BF16>(),
    entry<CdnaMfma16x16x16F32BF16>(), entry<Cdna3Mfma16x16x32F32Fp8>(),
};
}  // namespace

std::span<const AmdAtomLauncher> cdna_mfma_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
