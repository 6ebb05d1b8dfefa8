#pragma once
// Host entry of the wgmma kernel (sm_90a, built only in the cuda backend): the tile classes of
// kWgmmaDimClasses (head_dim_classes.h), f16/bf16.
#include <cstdint>
#include <string>

#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/params.h"
#include "flashprobe/kernels/registry.h"
#include "src/wgmma/wgmma_config.h"

namespace flashprobe::kernels::detail {

// Items of the persistent grid's work list (wgmma_config.h) for problem p, as the launch builds it
// for the tile class of (p.d, p.dv) (whether row blocks pair depends on the class).
inline std::int64_t wgmma_work_items(const AttnProblem& p, bool fine_classes = false) {
  const bool causal = p.causal != Causal::none;
  switch (wgmma_class(p.d, p.dv, fine_classes).d) {
    case 64: return dev::work_list_of<64>(p.sq, p.hq, p.batch, causal).items();
    case 96: return dev::work_list_of<96>(p.sq, p.hq, p.batch, causal).items();
    case 128: return dev::work_list_of<128>(p.sq, p.hq, p.batch, causal).items();
    case 160: return dev::work_list_of<160>(p.sq, p.hq, p.batch, causal).items();
    case 224: return dev::work_list_of<224>(p.sq, p.hq, p.batch, causal).items();
    case 192: return dev::work_list_of<192>(p.sq, p.hq, p.batch, causal).items();
    default: return dev::work_list_of<256>(p.sq, p.hq, p.batch, causal).items();
  }
}

// wgmma's tile classes as text ("64/64, 128/128, ..."), from the list, for its description, and the
// rule the refusals of supports() and the launch name.
inline std::string wgmma_class_names(bool fine_classes = false) {
  std::string s;
  const auto add = [&s](const HeadDimClass& c) { s += (s.empty() ? "" : ", ") + std::to_string(c.d) + "/" + std::to_string(c.dv); };
  if (fine_classes)
    for (const HeadDimClass& c : kWgmmaFineDimClasses) add(c);
  else
    for (const HeadDimClass& c : kWgmmaDimClasses) add(c);
  return s;
}
inline std::string wgmma_dims_rule(bool fine_classes = false) {
  return "wgmma takes d and dv that are multiples of " + std::to_string(kHeadDimStep) +
         " and fit one of its tile classes (d/dv: " + wgmma_class_names(fine_classes) + ")";
}

// Whether this build has the schedules other than pingpong (-DFLASHPROBE_WGMMA_SCHEDULES=ON builds
// them for the variants wgmma/schedule=serial and wgmma/schedule=overlap; the default build has
// pingpong, the shipped one, only).
#if defined(FLASHPROBE_WGMMA_SCHEDULES)
inline constexpr bool kWgmmaAllSchedules = true;
#else
inline constexpr bool kWgmmaAllSchedules = false;
#endif

// The launch's measurement choices: the shipped kernel takes the defaults; the named variants of
// variants.h (wgmma/schedule=..., wgmma/carry=on, wgmma/l2ahead=on, wgmma/epilogue=pairs, wgmma/grid=full,
// wgmma/blocks=<n>) set them, for benchmarks and tests only.
struct WgmmaOptions {
  dev::WgmmaSchedule schedule = dev::WgmmaSchedule::pingpong;
  bool full_grid = false;  // one block per work item instead of one per SM (no persistence)
  int max_blocks = 0;      // > 0: the persistent grid capped at this many blocks
  // A row block's first S issued with the previous row block's last P V (wgmma_consumer.cuh,
  // wgmma_consumer_carry.cuh): pingpong, tile classes 64/64 and 128/128, no soft-cap or ALiBi.
  bool carry = false;
  // The producer brings the next row block's Q and first K/V tiles into the L2 while the current one
  // runs (wgmma_producer.cuh): pingpong, tile classes 64/64 and 128/128, no soft-cap or ALiBi.
  bool l2ahead = false;
  // O's stores. The shipped kernel stores 16-byte pieces after a transpose inside each lane quad
  // (wgmma_epilogue.h) where that is built: pingpong, tile classes 64/64 and 128/128, no soft-cap or
  // ALiBi (measured 1.07x the column pairs over the prefill grid, 1.22x at S 512:
  // reports/data/h100-80gb-hbm3/2026-11-27-vs-cudnn-974195e/); elsewhere, and with pair_stores (the
  // variant wgmma/epilogue=pairs, the earlier stores kept for comparison), 4-byte column pairs.
  bool pair_stores = false;
  // The tile classes: kWgmmaDimClasses, or kWgmmaFineDimClasses with fine_classes (the variant
  // wgmma/classes=fine: a 96/96 class; head_dim_classes.h wgmma_class).
  bool fine_classes = false;
  // The consumers' mask. The shipped kernel at the 64/64 and 128/128 classes without soft-cap or ALiBi,
  // where sq + sk <= kMaxLen32, sets it up in 32-bit affine form (wgmma_mask.h: one offset pair per row
  // block, a masked score tested against per-row limits); elsewhere, and with visible_mask (the variant
  // wgmma/mask=visible, the mask before the affine one, kept for comparison), four 64-bit visible_range
  // calls a thread per row block and a per-score test against absolute key indices.
  bool visible_mask = false;
  // K/V stages at the 64/64 class: 0, the class's own (3); 4 or 5 with the variant wgmma/stages=<n>
  // (WGMMA_NOTES.md, "wgmma/stages": the last tile's V wait), the shipped kernel otherwise.
  int stages = 0;
  // The TMA boxes of Q, K and V start 8 dims before dim 0 where a (batch, head)'s rows begin 16 bytes
  // into a 32-byte sector (d % 16 == 8 in a [b, s, h, d] tensor: every other head), so that box rows
  // lie on whole sectors; O's columns follow V's shift (wgmma/align=sector, wgmma_config.h
  // sector_shift): pingpong with the 16-byte stores, tile classes 64/64, 128/128 (with the affine
  // mask), 160/160 and 256/256, no soft-cap or ALiBi.
  bool align_rows = false;
};

// Launches wgmma_fwd in the tile class of (p.d, p.dv) on a persistent grid (one block per SM, never more than there are work
// items; o says otherwise). The TMA needs 16-byte aligned base pointers; a problem whose q, k or v
// pointer is not (a view at an odd offset) runs on mma instead, which handles any alignment.
// @pre o.schedule is pingpong, or kWgmmaAllSchedules; o.carry, o.l2ahead, o.pair_stores or o.visible_mask (one) only with
// pingpong in the 64/64 or 128/128 class without soft-cap or ALiBi (wgmma_carry_supports); o.align_rows alone, also in
// the 160/160 and 256/256 classes.
void launch_wgmma(const Params& p, Stream s, const WgmmaOptions& o = {});

}  // namespace flashprobe::kernels::detail
