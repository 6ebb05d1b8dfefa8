#pragma once
// Host launch of the mma kernel for one atom, element type and head dim: the tile configuration
// (kWaves waves of Atom::M query rows; kBn keys per K/V tile) and the grid.
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/registry.h"
#include "src/mma/mma_attn.cuh"

namespace flashprobe::kernels::detail {

// 4 waves per block: enough independent work to hide the matrix unit's latency. The pipelined
// NVIDIA path keeps two stages of K/V tiles (2 * 2 * kBn * (D + 8) 16-bit elements: 36 KB at
// D = 64, 68 KB at D = 128) in dynamic shared memory, raised above 48 KB where needed.
inline constexpr int kMmaWaves = 4;
// 64 keys per tile up to D = 128; at D = 256 the O accumulators (D / N tiles per lane) need the
// registers, so the tile halves to 32 keys.
template <int D>
inline constexpr int kMmaBn = D <= 128 ? 64 : 32;

template <class Atom, class E, int D>
void launch_mma_atom(const Params& p, Stream s) {
  using C = dev::MmaConfig<Atom, D, kMmaWaves, kMmaBn<D>>;
  const dim3 grid(static_cast<unsigned>((p.sq + C::kBm - 1) / C::kBm), static_cast<unsigned>(p.hq),
                  static_cast<unsigned>(p.batch));
  constexpr int smem = dev::mma_dynamic_smem_bytes<Atom, D, kMmaBn<D>>();
  auto* kernel = dev::mma_fwd<Atom, E, D, kMmaWaves, kMmaBn<D>>;
  if constexpr (smem > 48 * 1024) {
    static const bool raised = [&] {  // once per instantiation (the attribute is per function)
      FP_CHECK(fp_rt::set_max_dynamic_smem(kernel, smem));
      return true;
    }();
    (void)raised;
  }
  kernel<<<grid, C::kThreads, smem, s>>>(p);
  FP_CHECK_LAUNCH("mma_fwd");
}

}  // namespace flashprobe::kernels::detail
