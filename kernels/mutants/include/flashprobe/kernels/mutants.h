#pragma once
// The mutants as runnable kernels (flashprobe_mutants, linked into test binaries only, never
// dispatched): each is a KernelInfo named "mutant/<name>" plus its catalogue entry. A test runs every
// mutant over the kernel grid and asserts that at least one case fails the oracle check.
//
// Example:
//   for (const Mutant& m : mutants())
//     if (m.kernel.supports(dev, p)) { auto r = run_kernel(m.kernel, p, in); ... }
#include <vector>

#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/mutant_catalogue.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {

struct Mutant {
  MutantMeta meta;
  KernelInfo kernel;
};

// One entry per forward catalogue entry, in catalogue order (the backward entries, whose kernel is a
// backward kernel, are in backward_mutants()).
const std::vector<Mutant>& mutants();

// The backward kernels' mutants: each a BackwardKernelInfo named "mutant/<name>" (atomic dQ mode).
struct BackwardMutant {
  MutantMeta meta;
  BackwardKernelInfo kernel;
};
const std::vector<BackwardMutant>& backward_mutants();

// Tiled mutants are instantiated for this head dim only (compile time); decode and ref3pass
// mutants support what their production kernel supports.
inline constexpr int kMutantTiledDim = 64;

}  // namespace flashprobe::kernels
