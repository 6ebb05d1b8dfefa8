#pragma once
// The mutant catalogue, as data: real bug classes of attention kernels, each re-created as a
// compile-time variant (flashprobe/kernels/bug.h) of one production kernel, with the property that
// must kill it. This header and its table are part of flashprobe_kernels so that `flashprobe list
// mutants` and the reports can show the catalogue; the mutant *code* lives in flashprobe_mutants
// (kernels/mutants/), which only test binaries link.
//
// Example entry:
//   {"softmax_block_not_pow2", Bug::softmax_block_not_pow2, "ref3pass",
//    "softmax tree reduction over a block of sk threads, not rounded up to a power of two", ...}
#include <string>
#include <vector>

#include "flashprobe/kernels/bug.h"

namespace flashprobe::kernels {

struct MutantMeta {
  std::string name;         // "gqa_mod"; the mutant kernel is registered as "mutant/<name>"
  Bug bug;
  std::string kernel;       // the production kernel it is a variant of
  std::string description;  // one line: what the code does wrong
  std::string mirrors;      // the public bug class it re-creates
  std::string killed_by;    // the property / case that must catch it
  // Whether the kernel grid (tests/kernels/kernel_grid.h) has a case that shows it. False where only
  // the property gate reaches the bug (offsets past 2^31, forced split counts, rows of thousands of
  // keys with f16 inputs): test_mutation must kill it there.
  bool grid_kills = true;
};

const std::vector<MutantMeta>& mutant_catalogue();
const MutantMeta* find_mutant_meta(const std::string& name);

}  // namespace flashprobe::kernels
