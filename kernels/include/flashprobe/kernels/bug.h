#pragma once
// Bug: the compile-time switch that turns a production kernel template into one of the mutants of
// the catalogue (flashprobe/kernels/mutants.h). The production library instantiates Bug::none only;
// flashprobe_mutants instantiates the others and is linked into test binaries only. Each value is a
// real bug class; `if constexpr (bug == Bug::x)` marks the one place where a mutant differs.
namespace flashprobe::kernels {

enum class Bug {
  none,
  softmax_block_not_pow2,  // ref3pass: tree reduction over a block whose size is not a power of two
  causal_top_left,         // tiled: bottom-right causal computed as top-left
  kv_offset_ignored,       // decode: the causal diagonal ignores the tokens already in the cache
  varlen_diag_global,      // tiled: the diagonal uses the padded sk instead of the batch's own keys
  gqa_mod,                 // tiled: kv head h % Hkv instead of h / (Hq / Hkv)
  tail_unmasked,           // tiled: keys past the end of the last K/V tile are not masked
  masked_row_nan,          // tiled: no guard on a -inf running max (fully masked tile -> NaN)
  combine_skips_empty,     // decode: the combine stops at the first empty split
  missing_barrier,         // tiled: no barrier between the shared-memory tile writes and reads
  bf16_truncate,           // ref3pass: f32 -> bf16 output by truncation instead of round-to-nearest-even
  lse_scale_twice,         // tiled: the softmax scale applied again when forming the LSE
  rowsum_f16,              // tiled: the softmax row sum accumulated in fp16
  bwd_no_rowsum_d,         // tiled_bwd: dS = P dP, rowsum(dO ∘ O) not subtracted
  bwd_gqa_unsummed,        // tiled_bwd: dK, dV of a kv head from the last query head of its group only
  bwd_softcap_grad_missing,  // tiled_bwd: the soft-cap's 1 - tanh² factor left out of dS
  bwd_causal_missing,      // tiled_bwd: the backward ignores the causal mask
  o_accum_f16,             // tiled: the O accumulator rounded to fp16 after every key tile
  v_reads_k_strides,       // tiled: V addressed with K's strides
  offset_32bit,            // tiled: element offsets kept in 32-bit signed range (wrap past 2^31)
  split_odd_dropped,       // decode: the combine drops the last split when the count is odd
  bwd_dq_race,             // tiled_bwd: dQ's fp32 accumulator read, added to and written back without atomics
  bwd_mma_no_rowsum_d,     // mma_bwd: dS = P dP, rowsum(dO ∘ O) not subtracted
  bwd_mma_gqa_unsummed,    // mma_bwd: dK, dV of a kv head from the last query head of its group only
  bwd_mma_softcap_grad_missing,  // mma_bwd: the soft-cap's 1 - tanh² factor left out of dS
  bwd_mma_causal_missing,  // mma_bwd: the backward ignores the causal mask
};
// The last Bug value (the catalogue has one entry per value after none).
inline constexpr Bug kLastBug = Bug::bwd_mma_causal_missing;

}  // namespace flashprobe::kernels
