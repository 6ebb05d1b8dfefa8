#pragma once
// The deterministic grid of attention problems every kernel is checked on (and every mutant must
// fail somewhere on). Each case names the feature it covers; a CPU test asserts that the grid covers
// every feature and edge case the issue lists, so the GPU run cannot silently shrink.
//
// Example:
//   for (const GridCase& c : kernel_grid())
//     for (DType t : {DType::f16, DType::bf16}) { AttnProblem p = c.with_dtype(t); ... }
#include <cstdint>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels::testing {

struct GridCase {
  std::string feature;  // "sk_edge", "gqa", "window", ... (what the case is there for)
  AttnProblem p;        // dtype f16; with_dtype() gives the other types
  InputDist dist;
  std::uint64_t seed = 0;
  AttnProblem with_dtype(DType t) const;  // inputs and output in t (mixed-output cases keep their out_dtype rule)
  std::string id(DType t) const { return feature + ":" + with_dtype(t).id(); }
};

const std::vector<GridCase>& kernel_grid();

// A contiguous BSHD f16 problem with dv = d: the grid's building block, for other tests' cases too.
AttnProblem make_problem(int batch, int hq, int hkv, int sq, int sk, int d);

// The edge values the issue requires.
inline constexpr int kGridSk[] = {0, 1, 2, 3, 5, 7, 63, 65, 127, 129};

// Each code path of a kernel on `dev` (gate::kernel_paths: mma's and wgmma's tile classes, decode's
// split plans) and how many of the problems it ran took it. The grid fails a kernel that runs on the
// device where one of its paths ran zero cases (test_kernels_gpu's KernelGrid).
struct GridPath {
  std::string name;  // "class 160/160", "plan half (one-row blocks)", ...
  int cases = 0;
};
std::vector<GridPath> grid_paths(const KernelInfo& k, const DeviceInfo& dev, const std::vector<AttnProblem>& ran);

}  // namespace flashprobe::kernels::testing
