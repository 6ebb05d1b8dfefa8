#pragma once
// Named kernel variants: a production kernel with one of its measurement choices fixed, for
// benchmarks and tests only. kernels() and select() never list or dispatch them, and the shipped
// launch code reads no environment: a variant is asked for by name (flashprobe bench --kernel,
// flashprobe run --kernel, the GPU tests), and every record names the variant that ran.
//
// A name is the kernel's name, a slash and its options, joined by ',':
//   mma/order=rows|heads            the block order forced (src/mma/mma_order.h; default: by the mask)
//   mma/rescale=lazy                the conditional rescale, threshold 2^8 (src/mma/mma_rescale.h)
//   mma/classes=coarse              head dims in kMmaDimClasses, the ladder without the fine one's 160
//                                   and 192 (head_dim_classes.h; NVIDIA)
//   mma/small=plain|fma|c32|occ     d, dv <= 64 below 64/64 without soft-cap or ALiBi in a class-64
//                                   instantiation without their code; fma: part of each row's
//                                   exp2 on the FMA units; c32: d, dv <= 32 in a 32-wide class;
//                                   occ: as c32, with registers capped for 4 blocks per SM in the
//                                   32 class and 3 in class 64 (src/mma/mma_small.h,
//                                   src/exp2_fma.h; NVIDIA)
//   wgmma/schedule=serial|overlap   another consumer schedule (wgmma_config.h); built only with
//                                   -DFLASHPROBE_WGMMA_SCHEDULES=ON (the shipped one is pingpong)
//   wgmma/carry=on                  a row block's first S issued with the previous one's last P V
//                                   (pingpong, d and dv <= 128 without soft-cap or ALiBi;
//                                   src/wgmma/wgmma_consumer_carry.cuh); measured slower, built
//                                   only with -DFLASHPROBE_WGMMA_SCHEDULES=ON
//   wgmma/l2ahead=on                the producer prefetches the next row block's Q and first K/V
//                                   tiles into the L2 (same domain as carry=on, not with it;
//                                   src/wgmma/wgmma_producer.cuh)
//   wgmma/epilogue=pairs            O in 4-byte column pairs from the accumulator layout, the
//                                   stores before the shipped 16-byte ones (same domain as
//                                   l2ahead=on, not with carry or l2ahead; src/wgmma/wgmma_epilogue.h)
//   wgmma/mask=visible              the consumers' mask from four 64-bit visible_range calls per row
//                                   block, as before the shipped affine one (src/wgmma/wgmma_mask.h;
//                                   same domain as l2ahead=on, not with the other wgmma options
//                                   above); bitwise wgmma's output
//   wgmma/align=sector              Q, K and V boxes started 8 dims before dim 0 where a head's rows
//                                   begin 16 bytes into a 32-byte sector (d % 16 == 8), so box rows
//                                   lie on whole sectors; O's columns follow; the shipped kernel where
//                                   no (batch, head) of K or V shifts (tile classes 64/64,
//                                   128/128, 160/160, 256/256, no soft-cap or ALiBi, not with the
//                                   other wgmma options above; src/wgmma/wgmma_config.h sector_shift)
//   wgmma/stages=4|5                4 or 5 K/V stages instead of 3 at the 64/64 class (d, dv <= 64, no
//                                   soft-cap or ALiBi, sq + sk <= kMaxLen32; the shipped consumers and
//                                   producer otherwise; WGMMA_NOTES.md "wgmma/stages")
//   wgmma/classes=fine              head dims in kWgmmaFineDimClasses: 96/96, 192/192 and 224/224 tile
//                                   classes for d, dv in 72..96, 168..192 and 200..224 (head_dim_classes.h)
//   wgmma/grid=full                 one block per work item instead of the persistent grid
//   wgmma/blocks=<n>                the persistent grid capped at n blocks (decode_with_splits' twin)
//   decode/splits=<n>               exactly n key splits
//   decode/plan=half|full           the split count for half the resident blocks (decode_fused_splits)
//                                   or one full wave (decode_splits; decode_plan.h) whatever the rows
//                                   per block, instead of decode_plan_splits' choice by them; not with
//                                   splits=<n>
//   decode/fused=on                 one kernel planned for half the resident blocks: the split count
//                                   of decode_fused_splits, each block walking several splits of its
//                                   row tile when the batch needs (decode_walk, decode_plan.h), the
//                                   last block of a row tile combining its rows (src/decode.cuh);
//                                   bitwise the output of decode with the same split count
//   decode/walk=<n>                 with fused=on: at most n splits per block instead of the plan's
//   decode/combine=wide|pdl         the two-kernel decode's combine with every split's LSE and a batch
//                                   of partials loaded at once (wide; src/decode_combine.cuh), or that
//                                   kernel launched as a programmatic dependent of the split kernel
//                                   (pdl: it starts while the split kernel runs and waits for it; sm_90,
//                                   a plain launch elsewhere); the same sums in the same order, so
//                                   bitwise decode's output; not with fused=on
//   decode/depth=3                  the split kernel's 16-byte loads two steps ahead of the step that
//                                   computes (three register buffers, 2 blocks per SM) where a block
//                                   has one row; the same keys and arithmetic, so bitwise decode's
//                                   output; not with fused=on
//   decode/mma=on                   the query rows of a kv head (group x sq <= 16) as the rows of one
//                                   mma m16n8k16 tile, K/V streamed once per kv head through shared
//                                   memory (cp.async ring), decode_mma_splits' count, decode's combine
//                                   (src/decode_mma.cuh; NVIDIA); problems it does not take (decode_mma_takes,
//                                   AMD) run decode's split kernel; with splits=<n> only
// e.g. "wgmma/schedule=overlap,grid=full". The variant's name is canonical: options in the order above.
//
// Example:
//   const KernelInfo k = kernel_or_variant("mma/order=rows");   // UsageError for an unknown name
//   run_kernel(k, p, inputs);
#include <string>
#include <vector>

#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {

// The variants of this build with fixed-valued options ("mma/order=rows", ...; the
// schedules only where built): the GPU tests run each of them over the kernel grid.
std::vector<std::string> variant_names();
// What a variant name may be, for help and error messages.
std::string variant_syntax();
// The variant of that name. @throws UsageError naming the value and what is allowed.
KernelInfo find_variant(const std::string& name);
// A production kernel (kernels()) or a variant. @throws UsageError naming the value, this build's
// kernels and the variant syntax.
KernelInfo kernel_or_variant(const std::string& name);

}  // namespace flashprobe::kernels
