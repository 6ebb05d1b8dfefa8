// CDNA MFMA experiment kernels (wave64). gfx908 lacks the bf16 "_1k" forms and only gfx940/941/942
// have the FNUZ fp8/bf8 forms: those kernels compile to the trap path there, and the host never
// launches them (amd_atom_runs_on).
#include "flashprobe/probes/amd/experiment.cuh"
#include "flashprobe/probes/amd/launchers.h"

namespace flashprobe::probes::amd {
namespace {
using namespace flashprobe::atoms;
using fp_amd::agrees_with_table;
static_assert(agrees_with_table<CDNA_MFMA_32x32x8_F32F16>());
static_assert(agrees_with_table<CDNA_MFMA_16x16x16_F32F16>());
static_assert(agrees_with_table<CDNA_MFMA_32x32x8_F32BF16_1K>());
static_assert(agrees_with_table<CDNA_MFMA_16x16x16_F32BF16_1K>());
static_assert(agrees_with_table<CDNA_MFMA_16x16x32_F32E4M3>());
static_assert(agrees_with_table<CDNA_MFMA_32x32x16_F32E4M3>());
static_assert(agrees_with_table<CDNA_MFMA_16x16x32_F32E4M3E5M2>());
static_assert(agrees_with_table<CDNA_MFMA_16x16x32_F32E5M2E4M3>());
static_assert(agrees_with_table<CDNA_MFMA_16x16x32_F32E5M2>());
static_assert(agrees_with_table<CDNA_MFMA_32x32x16_F32E4M3E5M2>());
static_assert(agrees_with_table<CDNA_MFMA_32x32x16_F32E5M2E4M3>());
static_assert(agrees_with_table<CDNA_MFMA_32x32x16_F32E5M2>());

template <class Atom>
constexpr AmdAtomLauncher entry() {
  return {Atom::kName, &fp_amd::launch_atom_experiments<Atom>};
}
const AmdAtomLauncher kLaunchers[] = {
    entry<CDNA_MFMA_32x32x8_F32F16>(),
    entry<CDNA_MFMA_16x16x16_F32F16>(),
    entry<CDNA_MFMA_32x32x8_F32BF16_1K>(),
    entry<CDNA_MFMA_16x16x16_F32BF16_1K>(),
    entry<CDNA_MFMA_16x16x32_F32E4M3>(),
    entry<CDNA_MFMA_32x32x16_F32E4M3>(),
    entry<CDNA_MFMA_16x16x32_F32E4M3E5M2>(),
    entry<CDNA_MFMA_16x16x32_F32E5M2E4M3>(),
    entry<CDNA_MFMA_16x16x32_F32E5M2>(),
    entry<CDNA_MFMA_32x32x16_F32E4M3E5M2>(),
    entry<CDNA_MFMA_32x32x16_F32E5M2E4M3>(),
    entry<CDNA_MFMA_32x32x16_F32E5M2>(),
};
}  // namespace

std::span<const AmdAtomLauncher> cdna_mfma_launchers() { return kLaunchers; }

}  // namespace flashprobe::probes::amd
