// Compile time only (no kernel is instantiated here): the shared-memory counts the registry's
// supports() reads (mma_bwd_smem.h) are the kernels' own, for both shapes, modes and head dims.
#include <iterator>

#include "flashprobe/atoms/sm80_mma.cuh"
#include "src/mma/mma_bwd_launch.cuh"
#include "src/mma/mma_bwd_launchers.h"
#include "src/mma/mma_bwd_smem.h"

namespace flashprobe::kernels::detail {
namespace {

template <class Shape, MmaBwdShapeId kId, int D, bool kDet>
constexpr bool smem_counts_agree() {
  using Atom = atoms::SM80_16x8x16_F32F16F16F32_TN;
  constexpr int kTiles = dev::mma_bwd_ds_stages(!kDet, Shape::kDeferDq);
  constexpr int kDqTiles = dev::mma_bwd_dq_stages(Shape::kBulkDq);
  using C = dev::MmaBwdConfig<Atom, D, Shape::kWaves, kMmaBwdRows, kTiles, kDqTiles>;
  using Q = dev::MmaBwdDqConfig<Atom, D, kMmaBwdDqWaves, kMmaBwdDqKeys>;
  constexpr int kLargest = kDet && Q::kSmemBytes > C::kSmemBytes ? Q::kSmemBytes : C::kSmemBytes;
  return C::kBc == mma_bwd_block_keys(kId) && kTiles == mma_bwd_ds_tiles(kId, kDet) &&
         kDqTiles == mma_bwd_dq_tiles(kId) && C::kDqLd == mma_bwd_dq_staging_ld(D) && kMmaBwdRows == kMmaBwdSmemRows &&
         Q::kBm == kMmaBwdSmemRows && Q::kBn == kMmaBwdSmemDqKeys && mma_bwd_smem_bytes(kId, kDet, D) == kLargest;
}

template <int D>
constexpr bool all_agree() {
  return smem_counts_agree<MmaBwdShipped, MmaBwdShapeId::shipped, D, false>() &&
         smem_counts_agree<MmaBwdShipped, MmaBwdShapeId::shipped, D, true>() &&
         smem_counts_agree<MmaBwdK128, MmaBwdShapeId::k128, D, false>() &&
         smem_counts_agree<MmaBwdK128, MmaBwdShapeId::k128, D, true>();
}

static_assert(all_agree<kMmaBwdDims[0]>() && all_agree<kMmaBwdDims[1]>() && std::size(kMmaBwdDims) == 2,
              "mma_bwd_smem.h must count the shared memory the backward kernels ask for");
// mma_bwd_fa2: its kernel reads MmaBwdFa2Plan itself; what is checked here is that the registry's
// count is that plan's (and the deterministic mode's largest block is still the dK/dV kernel's).
template <int D>
constexpr bool fa2_agrees() {
  using Q = dev::MmaBwdDqConfig<atoms::SM80_16x8x16_F32F16F16F32_TN, D, kMmaBwdDqWaves, kMmaBwdDqKeys>;
  constexpr int kDkdv = MmaBwdFa2Plan<D>::kSmemBytes;
  return mma_bwd_smem_bytes(MmaBwdShapeId::fa2, false, D) == kDkdv &&
         mma_bwd_smem_bytes(MmaBwdShapeId::fa2, true, D) == (Q::kSmemBytes > kDkdv ? Q::kSmemBytes : kDkdv);
}
static_assert(fa2_agrees<64>() && fa2_agrees<128>(), "mma_bwd_smem.h must count mma_bwd_fa2's block");
// mma_bwd_k128_bulk: fast mode at the one head dim it is built for.
static_assert(smem_counts_agree<MmaBwdK128Bulk, MmaBwdShapeId::k128_bulk, kMmaBwdBulkDim, false>(),
              "mma_bwd_smem.h must count the bulk dQ staging tiles");

}  // namespace
}  // namespace flashprobe::kernels::detail
