#pragma once
// Host entry of the wgmma kernel (sm_90a, built only in the cuda backend): D in {64, 128}, f16/bf16.
#include <cstdint>

#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"
#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::detail {

inline constexpr int kWgmmaDims[] = {64, 128};

// Items of the persistent grid's work list (wgmma_config.h) for problem p; the tile height kBm is
// the same for every D.
inline std::int64_t wgmma_work_items(const AttnProblem& p) {
  static_assert(dev::WgmmaConfig<64>::kBm == dev::WgmmaConfig<128>::kBm, "one tile height for every D");
  return dev::work_list_of<64>(p.sq, p.hq, p.batch, p.causal != Causal::none).items();
}

// Launches wgmma_fwd for p.d on a persistent grid of at most max_blocks blocks (0: one per SM). The
// TMA needs 16-byte aligned base pointers; a problem whose q, k or v pointer is not (a view at an
// odd offset) runs on mma instead, which handles any alignment.
void launch_wgmma(const Params& p, Stream s, int max_blocks = 0);

}  // namespace flashprobe::kernels::detail
