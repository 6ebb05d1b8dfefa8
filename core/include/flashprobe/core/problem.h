#pragma once
// AttnProblem: one attention forward problem, exactly as docs/attention-semantics.md fixes it.
//
//   Q [B, Sq, Hq, D], K [B, Sk, Hkv, D], V [B, Sk, Hkv, Dv], O [B, Sq, Hq, Dv], LSE [B, Hq, Sq] (f32)
//   query head h reads kv head h / (Hq / Hkv); scale defaults to 1/sqrt(D).
//   Key j is visible to query i of batch b iff j < keys(b) and the mask allows it, where the
//   diagonal is j = i + diag_offset(b): keys(b) - Sq for bottom-right alignment (the KV-cache
//   convention, also used by windows and ALiBi when causal is off), 0 for top-left (torch is_causal).
//     causal:  j <= i + diag          window (left, right): i + diag - left <= j <= i + diag + right
//   Scores: s = scale * q.k; soft-cap: s = cap * tanh(s / cap); ALiBi: s -= slope[h] * |i + diag - j|.
//   A row with no visible key has O = 0 and LSE = -inf.
//
// Strides are in elements. All-zero strides mean contiguous BSHD; with_layout() sets BSHD or BHSD;
// any other strides (a fused QKV buffer view, say) are allowed if they do not alias.
//
// Example: a decode step of GQA with 7 cached tokens and 1 new one:
//   AttnProblem p; p.hq = 8; p.hkv = 2; p.sq = 1; p.sk = 8; p.kv_offset = 7; p.causal = Causal::bottom_right;
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flashprobe/core/dtype.h"
#include "flashprobe/core/mask.h"

namespace flashprobe {

enum class Causal { none, bottom_right, top_left };
enum class TensorLayout { bshd, bhsd };

struct Strides {
  std::int64_t b = 0, s = 0, h = 0, d = 0;
  bool operator==(const Strides&) const = default;
  bool is_zero() const { return b == 0 && s == 0 && h == 0 && d == 0; }
};

struct AttnProblem {
  int batch = 1;
  int hq = 1, hkv = 1;
  int sq = 1, sk = 1;
  int d = 64, dv = 64;
  DType dtype = DType::f16;      // Q, K, V as stored
  DType out_dtype = DType::f16;  // O as stored (LSE is f32)
  Strides q, k, v, o;            // elements; all zero = contiguous BSHD
  double scale = 0;              // 0 = 1/sqrt(d)
  Causal causal = Causal::none;
  // Tokens already in the KV cache, the sq new ones at [kv_offset, kv_offset + sq): when stated (> 0)
  // it must satisfy keys(b) == kv_offset + sq for every batch element (an error otherwise). The mask
  // reads only keys(b) and sq, so with bottom-right alignment new token i sees keys <= kv_offset + i.
  int kv_offset = 0;
  int window_left = -1;          // -1 = unbounded
  int window_right = -1;
  double softcap = 0;                // 0 = off
  std::vector<double> alibi_slopes;  // empty = off, else one per query head
  std::vector<int> seqlens_k;        // empty = every batch has sk keys, else per-batch lengths <= sk

  bool operator==(const AttnProblem&) const = default;

  double effective_scale() const;
  int group() const { return hq / hkv; }
  int kv_head(int h) const { return mask::kv_head(h, group()); }
  int keys(int b) const { return seqlens_k.empty() ? sk : seqlens_k[static_cast<std::size_t>(b)]; }
  std::int64_t diag_offset(int b) const { return mask::diag_offset(causal == Causal::top_left, keys(b), sq); }
  bool visible(int b, int i, int j) const;
  // The visible keys of row i form one interval [lo, hi] (empty when lo > hi).
  void visible_range(int b, int i, std::int64_t& lo, std::int64_t& hi) const;

  Strides q_strides() const;
  Strides k_strides() const;
  Strides v_strides() const;
  Strides o_strides() const;
  // Elements a buffer must hold for each tensor (largest offset + 1).
  std::int64_t q_span() const;
  std::int64_t k_span() const;
  std::int64_t v_span() const;
  std::int64_t o_span() const;
  std::int64_t lse_size() const { return std::int64_t{batch} * hq * sq; }

  AttnProblem& with_layout(TensorLayout l);
  // A short, unique string naming the problem, used as the case id in every record.
  std::string id() const;
};

Strides contiguous_strides(TensorLayout l, int seq, int heads, int dim);
// Largest element offset + 1 for a [batch, seq, heads, dim] tensor, or -1 on int64 overflow.
std::int64_t tensor_span(const Strides& st, int batch, int seq, int heads, int dim);

struct ProblemIssue {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  std::string field;
  std::string message;  // names the value and what is allowed
};
// Every problem with p (errors and warnings); empty means valid and unremarkable. The warnings scan
// every query row (batch x sq visible ranges): for reports and the CLI, not for every launch.
std::vector<ProblemIssue> validate(const AttnProblem& p);
// The errors of validate(p) alone, in the same order, without the row scan: what a launch or a
// kernel's supports() needs (constant work in sq; linear in the per-head and per-batch lists).
std::vector<ProblemIssue> problem_errors(const AttnProblem& p);
bool has_errors(const std::vector<ProblemIssue>& issues);
// Throws UsageError listing every error (warnings are not errors).
void require_valid(const AttnProblem& p);

std::string_view causal_name(Causal c);

void to_json(nlohmann::json& j, const AttnProblem& p);
// Strict (problem_io.h): unknown fields, wrong JSON types, out-of-range integers, aliases are UsageErrors.
void from_json(const nlohmann::json& j, AttnProblem& p);

}  // namespace flashprobe
