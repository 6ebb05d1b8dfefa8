#pragma once
// Host entry of the wgmma kernel (sm_90a, built only in the cuda backend): D in {64, 128}, f16/bf16.
#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels::detail {

inline constexpr int kWgmmaDims[] = {64, 128};

// Launches wgmma_fwd for p.d. The TMA needs 16-byte aligned base pointers; a problem whose q, k or
// v pointer is not (a view at an odd offset) runs on mma instead, which handles any alignment.
void launch_wgmma(const Params& p, Stream s);

}  // namespace flashprobe::kernels::detail
