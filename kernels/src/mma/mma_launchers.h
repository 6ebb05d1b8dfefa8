#pragma once
// Host entry points of the mma kernel: one per target family and head dim.
#include <string>

#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels::detail {

// mma.sync m16n8k16 (sm_80+): D in {64, 80, 96, 128, 256}.
template <int D>
void launch_mma_nvidia(const Params& p, Stream s);

// AMD: the atom follows the device's architecture family ("gfx11", "gfx12", "cdna").
// gfx11/gfx12 WMMA: D in {64, 80, 96, 128, 256}; CDNA MFMA 32x32x8: D in {64, 96, 128, 256}.
template <int D>
void launch_mma_amd(const Params& p, const std::string& family, Stream s);

}  // namespace flashprobe::kernels::detail
