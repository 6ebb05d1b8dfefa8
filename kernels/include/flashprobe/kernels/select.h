#pragma once
// The dispatcher: a pure host function from (device, problem) to the kernel that should run it,
// with the reason for the choice and for every kernel passed over. It is also the answer to "is
// this supported?" and what the reports print. It never picks code the binary lacks: the device's
// architecture is checked against the architectures this binary was compiled for.
//
// Preference (preference_order in select.cpp, each step with its measured reason there):
//   a few query rows (sq == 1, or sq <= 8 with fewer blocks than SMs): decode > mma > tiled > ref3pass
//   mma's 32/32 class on NVIDIA (d, dv <= 32, no soft-cap/ALiBi):   mma > wgmma > decode > tiled > ref3pass
//   every other problem:                                            wgmma > mma > decode > tiled > ref3pass
// wgmma (wgmma + TMA) supports sm_90 only, mma (tensor cores through an atom) every family with an
// atom, ref3pass any shape: the correctness fallback.
//
// Example:
//   Selection s = select(require_device(), problem);
//   if (!s) throw UsageError("unsupported: " + s.reason);
//   s.kernel->launch(...);
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {

// The device code a binary carries. vendor: "nvidia", "amd" or "" (no GPU backend).
// NVIDIA entries follow CMAKE_CUDA_ARCHITECTURES: "80" (SASS sm_80 + PTX compute_80), "80-real",
// "80-virtual". AMD entries are gfx names ("gfx90a").
struct BinaryTargets {
  std::string vendor;
  std::vector<std::string> archs;
};
// This build's targets (from the CMake configuration).
BinaryTargets binary_targets();
// Empty when code in `bin` runs on `dev`, else the reason (naming both sides).
// NVIDIA: SASS sm_XY runs on sm_XZ with Z >= Y (same major); PTX compute_N JIT-compiles for any
// sm >= N. AMD: a code object runs only on its own gfx target.
std::string binary_runs_on(const BinaryTargets& bin, const DeviceInfo& dev);

struct Rejection {
  std::string kernel;
  std::string reason;
};

struct Selection {
  const KernelInfo* kernel = nullptr;  // nullptr: nothing can run the problem here
  std::string reason;                  // why this kernel, or why none
  std::vector<Rejection> rejected;     // the kernels preferred over it that could not run it
  explicit operator bool() const { return kernel != nullptr; }
  std::string describe() const;        // the reason and every rejection, one per line
};

// The dispatcher order of preference for a problem on a device, by name (kernels missing from the
// registry are reported): mma, decode, tiled, ref3pass; decode first when sq <= kDecodeMaxSq and
// batch * hq blocks would not fill the device's multiprocessors (select.cpp has the measurements).
const std::vector<std::string>& preference_order(const DeviceInfo& dev, const AttnProblem& p);

Selection select(const DeviceInfo& dev, const AttnProblem& p);
// The same with the binary's targets and the candidate table given (tests use fake ones).
Selection select(const DeviceInfo& dev, const AttnProblem& p, const BinaryTargets& bin,
                 const std::vector<KernelInfo>& table);

}  // namespace flashprobe::kernels
