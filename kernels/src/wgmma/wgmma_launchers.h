#pragma once
// Host entry of the wgmma kernel (sm_90a, built only in the cuda backend): D in {64, 128}, f16/bf16.
#include <cstdint>

#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"
#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::detail {

inline constexpr int kWgmmaDims[] = {64, 128};

// Items of the persistent grid's work list (wgmma_config.h) for problem p, as the launch builds it
// for p.d (whether row blocks pair depends on d).
inline std::int64_t wgmma_work_items(const AttnProblem& p) {
  const bool causal = p.causal != Causal::none;
  return p.d == 64 ? dev::work_list_of<64>(p.sq, p.hq, p.batch, causal).items()
                   : dev::work_list_of<128>(p.sq, p.hq, p.batch, causal).items();
}

// Launches wgmma_fwd for p.d on a persistent grid of at most max_blocks blocks (0: one per SM). The
// TMA needs 16-byte aligned base pointers; a problem whose q, k or v pointer is not (a view at an
// odd offset) runs on mma instead, which handles any alignment.
void launch_wgmma(const Params& p, Stream s, int max_blocks = 0);

}  // namespace flashprobe::kernels::detail
