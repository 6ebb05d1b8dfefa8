#pragma once
// wgmma: FlashAttention forward for Hopper (sm_90a) on warpgroup matrix instructions fed by the
// tensor memory accelerator (TMA). A persistent grid (one block per SM) walks a list of 128-row
// blocks of (batch, head) pairs (WgmmaWorkList, wgmma_config.h), each block with three warpgroups of
// their own roles (warp specialisation, as FlashAttention-3):
//   warpgroup 0, the producer, gives its registers back (setmaxnreg, sm90_roles.cuh) and one thread
//     of it issues the TMA loads: the Q tile once, K and V tiles of kBn keys into a kStages-deep ring
//     in shared memory (128-byte swizzle, 64 dims per box). K and V of a stage have their own "full"
//     barriers (transaction bytes) and their own "empty" barriers, on which each consumer warpgroup
//     arrives once it no longer reads them: a K stage is refilled as soon as S is computed, before
//     P·V of the same tile has finished;
//   warpgroups 1 and 2, the consumers, own 64 query rows each and take the registers the producer
//     gave back; per key tile:
//     S = Q K^T       wgmma SS m64n{kBn}k16, Q and K straight from the swizzled tiles (K-major)
//     online softmax  on the accumulators, row structure from derive_c_rows of the atom's C layout
//     P               packed in registers as the A operand of the next product: derive_wide_c_to_a
//                     proves that k-step ks of P·V is accumulator slots of the same thread
//     O += P V        wgmma RS m64n{kDv}k16 with B = V read N-major (imm-trans-b), no transposed copy
//     in the order WgmmaSchedule names (wgmma_config.h): one after the other, or S(t) issued with
//     P(t-1)V(t-1) and softmax(t) computed while the latter runs, optionally taking turns;
//   at the end O /= l and LSE = m + log(l) (natural log); empty rows O = 0, LSE = -inf.
// Before this layout (WGMMA_NOTES.md) thread 0 of a consumer warpgroup also produced, so
// every refill stalled that warpgroup's products; with it the overlapped schedules measured slower.
// Persistence hides what a block per row block pays unhidden at one block per SM: barrier set-up,
// the first loads' latency and the stores at the end overlap the neighbouring row blocks' work.
// Masking (causal with either alignment, windows, per-batch key counts, soft-cap, ALiBi) is the
// mma kernel's, written once in attn_common.cuh: tiles outside the block's visible key range are
// never loaded, tiles that every row of a warpgroup sees whole skip the per-score compare, keys past
// the tensor arrive as zeros from the TMA and are masked. V rows past keys(b) inside the tensor (a
// padded cache) may hold anything, NaN included, and 0 * NaN is NaN in P·V: the producer warp
// zeroes them in the one tile that crosses keys(b) before the consumers may read it.
// Register placement comes from the atom (SM90_64xNx16_Layout, checked against the registry and the
// H100 probe); the shared-memory layouts are the canonical ones of the wgmma matrix descriptor:
//   Q, K  [rows][64] per 64-dim chunk, 128-byte swizzle, K-major: SBO = 1024 (8 rows), start + 32 B
//         per k-step of 16 dims inside a chunk
//   V     the same tile read as B[k = key][n = dim], N-major: LBO = next 64-dim chunk, SBO = 8 keys
#include <cstdint>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/atoms/sm90_wgmma.cuh"
#include "flashprobe/core/device.cuh"
#include "src/wgmma/sm90_roles.cuh"
#include "src/wgmma/sm90_tma.cuh"
#include "src/wgmma/wgmma_block.cuh"
#include "src/wgmma/wgmma_config.h"
#include "src/wgmma/wgmma_consumer.cuh"
#include "src/wgmma/wgmma_consumer_carry.cuh"
#include "src/wgmma/wgmma_producer.cuh"

namespace flashprobe::kernels::dev {

// kCarry: the consumers of wgmma/carry=on (wgmma_consumer_carry.cuh; pingpong, no soft-cap or ALiBi).
// kL2Ahead: the producer of wgmma/l2ahead=on (wgmma_producer.cuh; the consumers are the shipped ones).
// kVecO: the consumers store O in 16-byte pieces (wgmma_epilogue.h; the shipped kernel at 64/64 and
// 128/128 without extras; not with kCarry).
// kAffine: the consumers' mask in 32-bit affine form (wgmma_mask.h; the shipped kernel with kVecO, no extras, sq + sk <= kMaxLen32).
// kAlign: box rows on 32-byte sectors (wgmma/align=sector, wgmma_config.h sector_shift; with kVecO, no extras).
// kStagesWanted: 0, the class's K/V stage count; n > 0, exactly n (wgmma/stages=<n>, WgmmaConfig).
template <class E, int D, int Dv, WgmmaSchedule kSched, bool kExtras, bool kCarry, bool kL2Ahead, bool kVecO, bool kAffine,
          int kStagesWanted = 0, bool kAlign = false>
__global__ __launch_bounds__(WgmmaConfig<D, Dv>::kThreads, 1) void wgmma_fwd(const __grid_constant__ Params p,
                                                                          const __grid_constant__ CUtensorMap tq,
                                                                          const __grid_constant__ CUtensorMap tk,
                                                                          const __grid_constant__ CUtensorMap tv) {
#if !defined(FP_CAP_SM90A)
  (void)p, (void)tq, (void)tk, (void)tv;
  fp_dev::trap();  // sm_90a only; the registry never launches it elsewhere
#else
  using C = WgmmaConfig<D, Dv, kStagesWanted>;
  static_assert(!kStagesWanted || (!kCarry && !kL2Ahead), "wgmma/stages=<n> is built with the shipped producer and consumers");
  static_assert(!kCarry || (kSched == WgmmaSchedule::pingpong && !kExtras), "wgmma/carry=on is pingpong without extras");
  static_assert(!(kCarry && kVecO), "the 16-byte O stores are built with wgmma_consume only");
  static_assert(!kAlign || (kVecO && !kExtras && !kCarry && !kL2Ahead), "wgmma/align=sector is built with the shipped stores and mask only");
  extern __shared__ std::uint8_t smem_raw[];
  const WgmmaSmem<D, Dv, kStagesWanted> sm = wgmma_smem<D, Dv, kStagesWanted>(smem_raw);
  if (threadIdx.x == 0) sm.init_barriers();
  __syncthreads();
  // One branch per role (setmaxnreg takes effect only so); from here on no barrier spans the block.
  if (threadIdx.x < 128) {
    sm90::regs_dec<C::kProducerRegs>();
    if (threadIdx.x < 32) wgmma_produce<D, Dv, kL2Ahead, kStagesWanted, kAlign>(sm, p, &tq, &tk, &tv);
  } else {
    sm90::regs_inc<C::kConsumerRegs>();
    if constexpr (kCarry) wgmma_consume_carried<E, D, Dv>(sm, p);
    else wgmma_consume<E, D, Dv, kSched, kExtras, kVecO, kAffine, kStagesWanted, kAlign>(sm, p);
  }
#endif
}

}  // namespace flashprobe::kernels::dev
