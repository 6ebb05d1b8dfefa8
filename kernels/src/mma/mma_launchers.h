#pragma once
// Host entry points of the mma kernel: one per target family and head dim.
#include <string>

#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"
#include "src/mma/mma_order.h"
#include "src/mma/mma_rescale.h"
#include "src/mma/mma_small.h"

namespace flashprobe::kernels::detail {

// The launch's measurement choices: the shipped kernel takes the defaults; the named variants of
// variants.h (mma/order=..., mma/rescale=lazy, mma/classes=coarse, mma/small=...) set them, for benchmarks and tests only.
struct MmaOptions {
  dev::MmaOrderChoice order = dev::MmaOrderChoice::automatic;
  dev::MmaRescale rescale = dev::MmaRescale::always;
  // NVIDIA: run every (d, dv) in its class of kMmaDimClasses, the ladder without 160 and 192
  // (head_dim_classes.h); the default runs mma_nvidia_class's.
  bool coarse_classes = false;
  // NVIDIA: the small head dims (mma_small_takes) in the plain class-64 instantiation, exp2 on the
  // MUFU (plain) or partly on the FMA units (fma); off: mma's general instantiation.
  dev::MmaSmall small = dev::MmaSmall::off;
};

// The atom family of a device as the mma kernel picks it: "sm80", "gfx11", "gfx12", "cdna" or "".
std::string mma_atom_family(const DeviceInfo& dev);

// mma.sync m16n8k16 (sm_80+) in tile class D (kMmaFineDimClasses, which holds kMmaDimClasses): p.d,
// p.dv <= D, multiples of 8.
template <int D>
void launch_mma_nvidia(const Params& p, Stream s, const MmaOptions& o = {});
// The same in mma_nvidia_class(p.d, p.dv, soft-cap or ALiBi, o.coarse_classes) (head_dim_classes.h).
// @pre head_dim_class(kMmaDimClasses, p.d, p.dv) != 0
void launch_mma_nvidia_any(const Params& p, Stream s, const MmaOptions& o = {});

// AMD: the atom follows the device's architecture family ("gfx11", "gfx12", "cdna").
// gfx11/gfx12 WMMA: D in {64, 80, 96, 128, 256}; CDNA MFMA 32x32x8: D in {64, 96, 128, 256}.
template <int D>
void launch_mma_amd(const Params& p, const std::string& family, Stream s, const MmaOptions& o = {});

}  // namespace flashprobe::kernels::detail
