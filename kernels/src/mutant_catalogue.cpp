#include "flashprobe/kernels/mutant_catalogue.h"

namespace flashprobe::kernels {

const std::vector<MutantMeta>& mutant_catalogue() {
  static const std::vector<MutantMeta> c{
      {"softmax_block_not_pow2", Bug::softmax_block_not_pow2, "ref3pass",
       "softmax tree reduction over a block of sk threads without rounding up to a power of two",
       "a softmax whose block size followed the row length dropped the third of 3 elements: every generated "
       "token came out the same",
       "oracle agreement with sk in {3, 5, 7} (any sk < 256 that is not a power of two)"},
      {"causal_top_left", Bug::causal_top_left, "tiled",
       "bottom-right causal mask computed with the diagonal at 0 (top-left)",
       "kernels that implemented torch's is_causal alignment where the KV-cache convention was asked for",
       "oracle agreement, causal with sk != sq"},
      {"kv_offset_ignored", Bug::kv_offset_ignored, "decode",
       "causal diagonal computed from the new tokens only, ignoring the kv_offset tokens already cached",
       "decode kernels masking with the chunk's own positions after a KV-cache append",
       "oracle agreement, causal with kv_offset > 0"},
      {"varlen_diag_global", Bug::varlen_diag_global, "tiled",
       "causal diagonal from the padded sk instead of the batch's own key count",
       "varlen / paged-cache kernels aligning every batch element to the longest sequence",
       "oracle agreement, causal with per-batch key lengths below sk"},
      {"gqa_mod", Bug::gqa_mod, "tiled", "query head h reads kv head h % Hkv instead of h / (Hq / Hkv)",
       "GQA ports that interleaved the query heads of a group the wrong way",
       "oracle agreement, GQA with hkv >= 2 and group >= 2"},
      {"tail_unmasked", Bug::tail_unmasked, "tiled",
       "keys past keys(b) in the last K/V tile are not masked (zero-filled keys get score 0)",
       "off-by-one in the tail tile when sk is not a multiple of the tile width",
       "oracle agreement, non-causal with sk % 32 != 0"},
      {"masked_row_nan", Bug::masked_row_nan, "tiled",
       "online softmax with no guard on a -inf running max: a fully masked tile gives exp(-inf - -inf) = NaN",
       "FlashAttention ports producing NaN for rows whose first tiles are masked (sliding windows, padding)",
       "finite output / oracle agreement with a sliding window or rows that see no key"},
      {"combine_skips_empty", Bug::combine_skips_empty, "decode",
       "split-K combine stops at the first split with lse = -inf, losing the later splits",
       "split-KV decode kernels mishandling splits that hold no visible key",
       "oracle agreement, decode with a window or causal mask that empties the first splits"},
      {"missing_barrier", Bug::missing_barrier, "tiled",
       "no barrier between writing a K/V tile to shared memory and reading it",
       "shared-memory race after a refactor removed a __syncthreads (caught by racecheck, shows as wrong output)",
       "oracle agreement over many tiles (long sk); compute-sanitizer racecheck"},
      {"bf16_truncate", Bug::bf16_truncate, "ref3pass",
       "f32 -> bf16 output by dropping the low 16 bits instead of round-to-nearest-even",
       "hand-written bf16 conversions that truncate (biased toward zero by half an ulp on average)",
       "oracle agreement of bf16 outputs (bias over many elements)"},
      {"lse_scale_twice", Bug::lse_scale_twice, "tiled",
       "the softmax scale applied again to the running max when forming the LSE",
       "kernels that fold scale*log2(e) into the exponent and re-apply the scale when writing LSE",
       "LSE agreement (O is unaffected: only an LSE check kills it)"},
      {"rowsum_f16", Bug::rowsum_f16, "tiled", "the softmax row sum accumulated in fp16",
       "half-precision accumulators for the softmax denominator",
       "oracle agreement with long rows (sk >= 1000)"},
      {"o_accum_f16", Bug::o_accum_f16, "tiled", "the output accumulator O rounded to fp16 after every key tile",
       "kernels that keep the O accumulator in half precision (registers or shared memory) to save space: "
       "invisible on short rows, it drifts over thousands of keys",
       "oracle agreement with f16 inputs and long rows (Sk in the thousands: Domain::long_row_odds)", false},
      {"v_reads_k_strides", Bug::v_reads_k_strides, "tiled", "V addressed with K's strides (the load of V tiles reuses K's)",
       "kernels tested only on K and V of one layout: a KV cache with V transposed (BHSD) or padded differently "
       "reads garbage; the outside mutation test of the H100 gate left this one alive in the mma kernel",
       "oracle agreement with independent layouts per tensor (K in BSHD, V in BHSD, padded rows, caches with room)"},
      {"offset_32bit", Bug::offset_32bit, "tiled",
       "element offsets of Q, K, V and O kept in 31 bits (a signed 32-bit index, wrapped back inside the tensor so "
       "that the mutant reads wrong rows instead of faulting)",
       "int32 offset arithmetic (b * stride_b in int) that overflows once a tensor passes 2^31 elements: large "
       "batches, long caches, paged KV pools",
       "LargeOffsetsAgree (batch strides past 2^31 elements; no other property comes near 2^31)", false},
      {"split_odd_dropped", Bug::split_odd_dropped, "decode",
       "the split-K combine merges splits in pairs and drops the last split when the count is odd",
       "pairwise (tree) reductions of split-KV partials written for even split counts",
       "oracle agreement with a forced odd split count (1, 3, 5, ...: decode's own generator, Case::splits)", false},
      {"bwd_no_rowsum_d", Bug::bwd_no_rowsum_d, "tiled_bwd", "dS = P dP: the row term rowsum(dO ∘ O) is not subtracted",
       "backward kernels that dropped the softmax Jacobian's diagonal correction (D = rowsum(dO ∘ O))",
       "gradient agreement with the oracle (dQ, dK on any problem)"},
      {"bwd_gqa_unsummed", Bug::bwd_gqa_unsummed, "tiled_bwd",
       "dK and dV of a kv head come from the last query head of its group only (overwritten, not summed)",
       "GQA backward ports that wrote dK/dV per query head instead of reducing over the group",
       "gradient agreement, GQA with group >= 2; GQA = summed MHA"},
      {"bwd_softcap_grad_missing", Bug::bwd_softcap_grad_missing, "tiled_bwd",
       "the soft-cap derivative 1 - tanh²(s / cap) is left out of dS",
       "soft-capped (Gemma-2 style) attention whose backward differentiated the uncapped scores",
       "gradient agreement with a small soft-cap (cap <= 5 over logits of order 1)"},
      {"bwd_causal_missing", Bug::bwd_causal_missing, "tiled_bwd",
       "the backward recomputes P without the causal mask (the forward applied it)",
       "backward kernels whose mask code path diverged from the forward's",
       "gradient agreement, causal problems"},
      {"bwd_dq_race", Bug::bwd_dq_race, "tiled_bwd",
       "the fast mode's dQ accumulator is read before a key block's dS K is summed and written back after it, "
       "without atomics: key blocks that reach the same query row together lose each other's updates",
       "FlashAttention-2 ports that load the dQ accumulator tile, add and store it (a plain read-modify-write) "
       "where the original uses atomicAdd; FlashAttention's test_flash_attn_race_condition",
       "gradient agreement (dQ) on problems with many key blocks per row (sk >> 8); compute-sanitizer's "
       "racecheck sees shared memory only and cannot catch it"},
      {"bwd_mma_no_rowsum_d", Bug::bwd_mma_no_rowsum_d, "mma_bwd",
       "mma_bwd: dS = P dP, the row term rowsum(dO ∘ O) is not subtracted",
       "tensor-core backward kernels that dropped the softmax Jacobian's diagonal correction",
       "gradient agreement with the oracle (dQ, dK on any problem)"},
      {"bwd_mma_gqa_unsummed", Bug::bwd_mma_gqa_unsummed, "mma_bwd",
       "mma_bwd: dK and dV of a kv head come from the last query head of its group only",
       "GQA ports of a tensor-core backward that reset the dK/dV accumulators per query head",
       "gradient agreement, GQA with group >= 2; GQA = summed MHA"},
      {"bwd_mma_softcap_grad_missing", Bug::bwd_mma_softcap_grad_missing, "mma_bwd",
       "mma_bwd: the soft-cap derivative 1 - tanh²(s / cap) is left out of dS",
       "soft-capped attention whose tensor-core backward differentiated the uncapped scores",
       "gradient agreement with a small soft-cap (cap <= 5 over logits of order 1)"},
      {"bwd_mma_causal_missing", Bug::bwd_mma_causal_missing, "mma_bwd",
       "mma_bwd: the backward's mask offsets ignore the causal mask (the forward applied it)",
       "tensor-core backward kernels whose mask code path diverged from the forward's",
       "gradient agreement, causal problems"},
  };
  return c;
}

const MutantMeta* find_mutant_meta(const std::string& name) {
  for (auto& m : mutant_catalogue())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace flashprobe::kernels
