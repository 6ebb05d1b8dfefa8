#pragma once
// Host-side handles to the AMD experiment kernels (HIP builds only): one entry per atom, each
// launching atom_experiments<Atom> on device pointers laid out [experiment][lane][slot]. The
// .cu file of each family (probes/amd/*.cu) provides its table; run.h is the checked entry point.
#include <span>
#include <string_view>

namespace flashprobe::probes::amd {

using DeviceLaunchFn = void (*)(int n, const float* a, const float* b, const float* c, float* d);

struct AmdAtomLauncher {
  std::string_view name;
  DeviceLaunchFn launch;
};

std::span<const AmdAtomLauncher> rdna3_wmma_w32_launchers();
std::span<const AmdAtomLauncher> rdna3_wmma_w64_launchers();
std::span<const AmdAtomLauncher> rdna4_wmma_w32_launchers();
std::span<const AmdAtomLauncher> rdna4_wmma_w64_launchers();
std::span<const AmdAtomLauncher> cdna_mfma_launchers();

}  // namespace flashprobe::probes::amd
