// The wgmma kernel's launches in the tile classes 64/64, 128/128 and 192/128 (the others each in
// wgmma_launch_d<D>.cu), and the entry that picks the class (wgmma_launch.cuh has the launch itself).
// Compiled for sm_90a only (kernels/CMakeLists.txt).
#include <cstdint>
#include <string>

#include "src/mma/mma_launchers.h"
#include "src/wgmma/wgmma_launch.cuh"

namespace flashprobe::kernels::detail {

template <>
void launch_wgmma_class<64, 64>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<64, 64>(p, s, o);
}
template <>
void launch_wgmma_class<128, 128>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<128, 128>(p, s, o);
}
template <>
void launch_wgmma_class<192, 128>(const Params& p, Stream s, const WgmmaOptions& o) {
  by_dtype<192, 128>(p, s, o);
}

namespace {
bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15) == 0; }
}  // namespace

void launch_wgmma(const Params& p, Stream s, const WgmmaOptions& o) {
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v)) {
    // TMA reads from 16-byte aligned bases only; mma takes any pointer (documented in the header).
    return launch_mma_nvidia_any(p, s);
  }
  const HeadDimClass c = wgmma_class(p.d, p.dv, o.fine_classes);
  // wgmma/align=sector: its kernel only where some (batch, kv head) of K or V shifts; elsewhere it would
  // run the shipped coordinates with its own overhead (measured 0.86-1.06x wgmma at d % 16 == 0,
  // reports/data/h100-80gb-hbm3/2026-11-27-wgmma-align-77b9f2d): the shipped kernel instead.
  if (o.align_rows) {
    const auto shifts = [&](const void* base, const DevStrides& st, int dim, int width) {
      return dev::any_sector_shift(reinterpret_cast<std::uintptr_t>(base), st.b, st.s, st.h, p.batch, p.sk, p.hkv, dim, width);
    };
    if (!shifts(p.k, p.ks, p.d, c.d) && !shifts(p.v, p.vs, p.dv, c.dv)) {
      WgmmaOptions shipped = o;
      shipped.align_rows = false;
      return launch_wgmma(p, s, shipped);
    }
  }
  if (c == HeadDimClass{64, 64}) return launch_wgmma_class<64, 64>(p, s, o);
  if (c == HeadDimClass{96, 96}) return launch_wgmma_class<96, 96>(p, s, o);
  if (c == HeadDimClass{128, 128}) return launch_wgmma_class<128, 128>(p, s, o);
  if (c == HeadDimClass{160, 160}) return launch_wgmma_class<160, 160>(p, s, o);
  if (c == HeadDimClass{192, 128}) return launch_wgmma_class<192, 128>(p, s, o);
  if (c == HeadDimClass{192, 192}) return launch_wgmma_class<192, 192>(p, s, o);
  if (c == HeadDimClass{224, 224}) return launch_wgmma_class<224, 224>(p, s, o);
  if (c == HeadDimClass{256, 256}) return launch_wgmma_class<256, 256>(p, s, o);
  throw UsageError("d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + ": " + wgmma_dims_rule(o.fine_classes));
}

}  // namespace flashprobe::kernels::detail
