#pragma once
// Host entry point of the AMD tensor-core backward (mma_bwd_amd): the atom follows the device's
// architecture family ("gfx11", "gfx12", "cdna"), D in kAmdBwdDims (mma_bwd_amd_plan.h).
#include <string>

#include "flashprobe/kernels/registry.h"
#include "src/bwd_params.h"

namespace flashprobe::kernels::detail {

template <int D>
void launch_mma_bwd_amd(const BwdParams& p, const std::string& family, Stream s);

}  // namespace flashprobe::kernels::detail
