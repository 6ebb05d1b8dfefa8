#pragma once
// Host launch of the mma kernel for one atom, element type and head dim: the tile configuration
// (kWaves waves of kMT m-tiles of Atom::M query rows; kBn keys per K/V tile) and the grid.
#include <cstdint>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/registry.h"
#include "src/mma/mma_attn.cuh"
#include "src/mma/mma_launchers.h"
#include "src/mma/mma_order.h"
#include "src/mma/mma_rescale.h"

namespace flashprobe::kernels::detail {

// 4 waves per block: enough independent work to hide the matrix unit's latency. The pipelined
// NVIDIA path keeps the block's Q tile and two stages of K/V tiles ((kBm + 2 * 2 * kBn) * (D + 8)
// 16-bit elements: 54 KB at D = 64, 102 KB at D = 128, 99 KB at D = 256) in dynamic shared memory,
// raised above 48 KB where needed (two blocks per SM still fit the H100's 227 KB).
inline constexpr int kMmaWaves = 4;
// Keys per K/V tile. 64 up to D = 128 (FlashAttention-2's 128 x 64 tile on sm80/sm90); at D = 256
// the O accumulators (D / N tiles per lane) need the registers, so the tile halves to 32 keys, and so
// does the ldmatrix path's soft-cap/ALiBi instantiation at D = 128, which spills at 64 with two
// m-tiles per wave (PERF_NOTES.md).
template <class Atom, int D, bool Extras>
constexpr int mma_bn() {
  if (D > 128) return 32;
  return D == 128 && Extras && dev::use_ldsm<Atom>() ? 32 : 64;
}

static_assert(dev::kMmaMaxGridY == kMaxGridYZ);

// MinBlocks > 0: mma_fwd_occ with that floor of resident blocks per SM (mma/small=occ; FmaTiles 0).
template <class Atom, class E, int D, bool Extras, bool PlainTail = false, int FmaTiles = 0, int MinBlocks = 0>
void launch_mma_config(const Params& p, Stream s, const MmaOptions& opt) {
  static_assert(MinBlocks == 0 || FmaTiles == 0, "mma_fwd_occ computes every exp2 on the MUFU");
  constexpr int kMT = dev::mma_default_mt<Atom, D>(), kBn = mma_bn<Atom, D, Extras>();
  using C = dev::MmaConfig<Atom, D, kMmaWaves, kBn, kMT>;
  const int nm = (p.sq + C::kBm - 1) / C::kBm;
  const dev::MmaOrder order = dev::mma_order(p.causal != CausalMode::none, nm, opt.order);
  const float rescale_log2 = dev::mma_rescale_log2(opt.rescale);
  const dev::MmaGrid g = dev::mma_grid(order, nm, p.hq, p.batch);
  const dim3 grid(g.x, g.y, g.z);
  constexpr int smem = C::kDynSmemBytes;
  auto* kernel = [] {
    if constexpr (MinBlocks > 0) return dev::mma_fwd_occ<Atom, E, D, kMmaWaves, kBn, kMT, Extras, PlainTail, MinBlocks>;
    else return dev::mma_fwd<Atom, E, D, kMmaWaves, kBn, kMT, Extras, PlainTail, FmaTiles>;
  }();
  if constexpr (smem > 48 * 1024) {
    static const bool raised = [&] {  // once per instantiation (the attribute is per function)
      FP_CHECK(fp_rt::set_max_dynamic_smem(kernel, smem));
      return true;
    }();
    (void)raised;
  }
  kernel<<<grid, C::kThreads, smem, s>>>(p, order, rescale_log2);
  FP_CHECK_LAUNCH("mma_fwd");
}

template <class Atom, class E, int D>
void launch_mma_atom(const Params& p, Stream s, const MmaOptions& opt) {
  // The kernel keeps row and key indices in 32 bits (see dev::visible_range32).
  if (static_cast<std::int64_t>(p.sq) + p.sk > kMaxLen32)
    throw UsageError("mma: sq=" + std::to_string(p.sq) + ", sk=" + std::to_string(p.sk) +
                     ": sq + sk must be at most " + std::to_string(kMaxLen32) + " (32-bit indices)");
  // The generic path (AMD) keeps one instantiation that handles every problem; so does the general
  // one (Extras) on NVIDIA: soft-cap, ALiBi, and head dims below the class (mma_attn.cuh).
  if (p.d > D || p.dv > D || p.d % 8 != 0 || p.dv % 8 != 0)
    throw UsageError("mma: d=" + std::to_string(p.d) + ", dv=" + std::to_string(p.dv) + " do not fit tile class " +
                     std::to_string(D) + " (multiples of 8 up to the class)");
  const bool extras = p.softcap > 0.f || p.alibi != nullptr;
  if (opt.small != dev::MmaSmall::off) {
    if constexpr (!dev::use_ldsm<Atom>()) {
      throw UsageError("mma/small=...: built for NVIDIA's ldmatrix path only (this device runs mma's generic path)");
    } else if constexpr (D == dev::kMmaSmallClass) {
      if (dev::mma_small_takes(p.d, p.dv, extras)) {
        const bool narrow = dev::mma_small_narrow_takes(p.d, p.dv, extras);
        if ((opt.small == dev::MmaSmall::c32 || opt.small == dev::MmaSmall::occ) && narrow)
          launch_mma_nvidia<dev::kMmaSmallNarrowClass>(p, s, opt);  // (mma's own class since the switch)
        else if (opt.small == dev::MmaSmall::fma) launch_mma_config<Atom, E, D, false, true, dev::kMmaSmallFmaTiles>(p, s, opt);
        else if (opt.small == dev::MmaSmall::occ)
          launch_mma_config<Atom, E, D, false, true, 0, dev::mma_small_occ_blocks(D)>(p, s, opt);
        else launch_mma_config<Atom, E, D, false, true, 0>(p, s, opt);
        return;
      }
    }
  }
  if constexpr (!mma_specialised_class(D)) {
    // The fine ladder's other classes: one instantiation, run-time d and dv, no soft-cap/ALiBi
    // (head_dim_classes.h; launch_mma_nvidia_any sends those to kMmaDimClasses).
    static_assert(dev::use_ldsm<Atom>(), "the fine ladder's classes are built for the ldmatrix path (NVIDIA)");
    if (extras)
      throw UsageError("mma: tile class " + std::to_string(D) + " is built without soft-cap and ALiBi (softcap=" +
                       std::to_string(p.softcap) + ", alibi " + (p.alibi ? "on" : "off") + ")");
    if constexpr (D == dev::kMmaSmallNarrowClass)
      if (opt.small == dev::MmaSmall::occ)  // (mma/small=occ: class 32 with its floor of blocks per SM)
        return launch_mma_config<Atom, E, D, false, false, 0, dev::mma_small_occ_blocks(D)>(p, s, opt);
    launch_mma_config<Atom, E, D, false>(p, s, opt);
  } else {
    const bool tail = p.d != D || p.dv != D;
    if (!dev::use_ldsm<Atom>() || tail || extras) launch_mma_config<Atom, E, D, true>(p, s, opt);
    else if constexpr (dev::use_ldsm<Atom>()) launch_mma_config<Atom, E, D, false>(p, s, opt);
  }
}

}  // namespace flashprobe::kernels::detail
