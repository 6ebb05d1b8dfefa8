#pragma once
// Host launch of mma_bwd / mma_bwd_det for one atom, element type and head dim: the row term, the
// dK/dV kernel (with atomic dQ in the fast mode) and the dQ pass (bwd_dq_convert, or the
// deterministic mma_bwd_dq).
#include <climits>
#include <cstdint>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/core/vendor_async.h"
#include "src/mma/mma_bwd.cuh"
#include "src/mma/mma_bwd_fa2.cuh"
#include "src/mma/mma_bwd_launchers.h"

namespace flashprobe::kernels::detail {

// The dK/dV kernel's shape: Waves waves of Atom::M = 16 keys (one wave per 16 keys keeps every row
// of S^T in one wave, so P^T and dS^T never leave the registers), query tiles of 64 rows; PairedDq:
// the fast mode's dQ atomics add two neighbouring columns per instruction; DeferDq: a step's dQ runs
// after the next step's barrier (one barrier per step); BulkDq: the fast mode's dQ tile is staged in
// shared memory in fp32 and added to the workspace one row per cp.reduce.async.bulk (sm_90) instead
// of atomics from registers. BWD_NOTES.md has the model of each.
template <int Waves, bool PairedDq, bool DeferDq, int SubD128, bool BulkDq = false, bool Fa2 = false>
struct MmaBwdShape {
  static constexpr int kWaves = Waves;
  static constexpr bool kPairedDq = PairedDq, kDeferDq = DeferDq, kBulkDq = BulkDq;
  static constexpr bool kFa2 = Fa2;  // the dK/dV kernel is mma_bwd_fa2_dkdv (mma_bwd_fa2_plan.h), not mma_bwd_dkdv
  static constexpr int kSubD128 = SubD128;  // query rows of S^T and dP^T live at once at d >= 128
};
// mma_bwd, mma_bwd_det (measured on the H200): 64-key blocks of 4 warps, scalar atomics.
using MmaBwdShipped = MmaBwdShape<4, false, false, 64>;
// mma_bwd_k128, mma_bwd_det_k128: FlashAttention-2's sm80 block (128 keys x 64 queries, 8 warps),
// half the dQ atomics and Q/dO tile loads per key, paired atomics, deferred dQ, and at d = 128 S^T
// and dP^T in two halves of 32 queries (no register spills). Compiled, not yet run on a GPU:
// registered beside the shipped shape, never preferred by the dispatcher.
using MmaBwdK128 = MmaBwdShape<8, true, true, 32>;
// mma_bwd_k128_bulk (fast mode, d = 64, sm_90): MmaBwdK128 with the bulk dQ reduction. Compiled, not
// yet run on a GPU: registered last, never preferred.
using MmaBwdK128Bulk = MmaBwdShape<8, true, true, 32, true>;
// mma_bwd_fa2, mma_bwd_det_fa2: FlashAttention-2's block with its two-dimensional wave split, P^T and
// dS^T through shared memory (mma_bwd_fa2_plan.h), dQ in the same step with paired atomics.
// Compiled, not yet run on a GPU: registered last, never preferred.
using MmaBwdFa2 = MmaBwdShape<8, true, false, 0, false, true>;
inline constexpr int kMmaBwdRows = 64;
inline constexpr int kMmaBwdDqWaves = 4;
inline constexpr int kMmaBwdDqKeys = 64;

template <class K>
void raise_smem(K* kernel, int bytes) {
  if (bytes > 48 * 1024) FP_CHECK(fp_rt::set_max_dynamic_smem(kernel, bytes));
}

template <class Atom, class E, int D, Bug bug, bool Det, bool Extras, class Shape>
void launch_mma_bwd_config(const BwdParams& bp, Stream s) {
  const Params& p = bp.f;
  static_assert(!Shape::kBulkDq || !Det, "the bulk dQ reduction is a fast-mode path");
  using C = dev::MmaBwdConfig<Atom, D, Shape::kWaves, kMmaBwdRows, dev::mma_bwd_ds_stages(!Det, Shape::kDeferDq),
                              dev::mma_bwd_dq_stages(Shape::kBulkDq)>;
  using Q = dev::MmaBwdDqConfig<Atom, D, kMmaBwdDqWaves, kMmaBwdDqKeys>;
  const std::int64_t rows = std::int64_t{p.batch} * p.hq * p.sq;
  constexpr int kRowsPerBlock = 128 / 32;
  if (rows > 0) {
    dev::mma_bwd_rowdot<bug><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), 128, 0, s>>>(bp);
    FP_CHECK_LAUNCH("mma_bwd_rowdot");
  }
  const std::int64_t nq = rows * p.d;
  // kFa2: the workspace zeroed by a memset and converted by mma_bwd_dq_convert (16-byte chunks, one
  // 32-bit division per 8 elements) instead of bwd_zero and bwd_dq_convert (one element and 64-bit
  // divisions per thread); the same dQ.
  constexpr bool kLeanIo = Shape::kFa2;
  if constexpr (kLeanIo) {
    if (!Det && nq > 0) FP_CHECK(fp_rt::memset_async(bp.dq_acc, 0, static_cast<std::size_t>(nq) * sizeof(float), s));
  } else if (!Det && nq > 0) {
    dev::bwd_zero<bug><<<static_cast<unsigned>((nq + dev::kBwdThreads - 1) / dev::kBwdThreads), dev::kBwdThreads, 0, s>>>(
        bp.dq_acc, nq);
    FP_CHECK_LAUNCH("bwd_zero");
  }
  if constexpr (Shape::kFa2) {
    if (p.sk > 0) {
      using F = MmaBwdFa2Plan<D>;
      auto* k = dev::mma_bwd_fa2_dkdv<Atom, E, D, bug, !Det, Extras>;
      static const bool raised = (raise_smem(k, F::kSmemBytes), true);  // once per instantiation
      (void)raised;
      const dim3 grid(static_cast<unsigned>((p.sk + F::kBc - 1) / F::kBc), static_cast<unsigned>(p.hkv),
                      static_cast<unsigned>(p.batch));
      k<<<grid, F::kWaves * Atom::kWave, F::kSmemBytes, s>>>(bp);
      FP_CHECK_LAUNCH("mma_bwd_fa2_dkdv");
    }
  } else if (p.sk > 0) {
    constexpr int kSub = D >= 128 ? Shape::kSubD128 : kMmaBwdRows;
    auto* k = dev::mma_bwd_dkdv<Atom, E, D, Shape::kWaves, kMmaBwdRows, kSub, bug, !Det, Shape::kPairedDq, Shape::kDeferDq,
                                Extras, Shape::kBulkDq>;
    static const bool raised = (raise_smem(k, C::kSmemBytes), true);  // once per instantiation
    (void)raised;
    const dim3 grid(static_cast<unsigned>((p.sk + C::kBc - 1) / C::kBc), static_cast<unsigned>(p.hkv),
                    static_cast<unsigned>(p.batch));
    k<<<grid, C::kThreads, C::kSmemBytes, s>>>(bp);
    FP_CHECK_LAUNCH("mma_bwd_dkdv");
  }
  if (nq == 0) return;
  if constexpr (Det) {
    auto* k = dev::mma_bwd_dq<Atom, E, D, kMmaBwdDqWaves, kMmaBwdDqKeys, bug, Extras>;
    static const bool raised = (raise_smem(k, Q::kSmemBytes), true);
    (void)raised;
    const dim3 grid(static_cast<unsigned>((p.sq + Q::kBm - 1) / Q::kBm), static_cast<unsigned>(p.hq),
                    static_cast<unsigned>(p.batch));
    k<<<grid, Q::kThreads, Q::kSmemBytes, s>>>(bp);
    FP_CHECK_LAUNCH("mma_bwd_dq");
  } else if constexpr (kLeanIo) {
    const std::int64_t chunks = std::int64_t{p.sq} * p.hq * (D / 8);
    const unsigned blocks = static_cast<unsigned>((chunks + dev::kBwdThreads - 1) / dev::kBwdThreads);
    dev::mma_bwd_dq_convert<E, D, bug><<<dim3(blocks, static_cast<unsigned>(p.batch)), dev::kBwdThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("mma_bwd_dq_convert");
  } else {
    dev::bwd_dq_convert<bug><<<static_cast<unsigned>((nq + dev::kBwdThreads - 1) / dev::kBwdThreads), dev::kBwdThreads, 0, s>>>(bp);
    FP_CHECK_LAUNCH("bwd_dq_convert");
  }
}

// Soft-cap/ALiBi get their own instantiation (as the forward's Extras): the plain one has no code
// for them.
template <class Atom, class E, int D, Bug bug, bool Det, class Shape>
void launch_mma_bwd_atom(const BwdParams& bp, Stream s) {
  const Params& p = bp.f;
  if (static_cast<std::int64_t>(p.sq) + p.sk > kMaxLen32)
    throw UsageError("mma_bwd: sq=" + std::to_string(p.sq) + ", sk=" + std::to_string(p.sk) +
                     ": sq + sk must be at most " + std::to_string(kMaxLen32) + " (32-bit indices)");
  if (Shape::kPairedDq && !Det && reinterpret_cast<std::uintptr_t>(bp.dq_acc) % 8 != 0)
    throw UsageError("mma_bwd: the dQ workspace at " + std::to_string(reinterpret_cast<std::uintptr_t>(bp.dq_acc)) +
                     " is not 8-byte aligned (its float pairs are added with one instruction): pass a 16-byte "
                     "aligned workspace");
  if (Shape::kFa2 && !Det && std::int64_t{p.sq} * p.hq * (D / 8) > INT_MAX)
    throw UsageError("mma_bwd: sq=" + std::to_string(p.sq) + ", hq=" + std::to_string(p.hq) +
                     ": the lean dQ conversion indexes sq * hq * d / 8 chunks in 32 bits; at most " + std::to_string(INT_MAX));
  if (Shape::kFa2 && !Det && reinterpret_cast<std::uintptr_t>(bp.dq_acc) % 16 != 0)
    throw UsageError("mma_bwd: the dQ workspace at " + std::to_string(reinterpret_cast<std::uintptr_t>(bp.dq_acc)) +
                     " is not 16-byte aligned (its rows are converted in 16-byte loads): pass a 16-byte aligned workspace");
  if (Shape::kBulkDq && reinterpret_cast<std::uintptr_t>(bp.dq_acc) % 16 != 0)
    throw UsageError("mma_bwd: the dQ workspace at " + std::to_string(reinterpret_cast<std::uintptr_t>(bp.dq_acc)) +
                     " is not 16-byte aligned (its rows are added with bulk copies): pass a 16-byte aligned workspace");
  if (p.softcap > 0.f || p.alibi != nullptr) launch_mma_bwd_config<Atom, E, D, bug, Det, true, Shape>(bp, s);
  else launch_mma_bwd_config<Atom, E, D, bug, Det, false, Shape>(bp, s);
}

template <class AtomF16, class AtomBF16, int D, Bug bug, bool Det, class Shape = MmaBwdShipped>
void launch_mma_bwd_pair(const BwdParams& bp, Stream s) {
  if (bp.f.dtype == DType::bf16) launch_mma_bwd_atom<AtomBF16, dev::BF16, D, bug, Det, Shape>(bp, s);
  else launch_mma_bwd_atom<AtomF16, dev::F16, D, bug, Det, Shape>(bp, s);
}

}  // namespace flashprobe::kernels::detail
