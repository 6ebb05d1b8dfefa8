#pragma once
// The attention oracle: the exact semantics of AttnProblem (flashprobe/core/problem.h) computed in double from
// the stored input values, and the same attention computed the way a fp16/bf16 kernel does it.
//
// Why two references: the double one is the truth; the low-precision one measures how far a
// *correct* kernel may legitimately sit from the truth on this very problem. check.h compares a
// kernel's error with the emulated one (oracle/TOLERANCE.md derives the bound).
//
// Each (batch, query head) is computed with Eigen's blocked products over the visible key range of
// a block of query rows: S = Q_blk K^T, then soft-cap, ALiBi, mask, a stable softmax per row and
// O_blk = P V. Full computations run on all cores; small ones stay on one thread.
//
// Result layout: O is [B, R, Hq, Dv] and LSE [B, Hq, R], contiguous, where R = rows.size() when rows
// were asked for (row r of the result is query row rows[r]) and R = Sq otherwise. A row that sees no
// key has O = 0 and LSE = -inf.
//
// Non-finite inputs follow IEEE rules per element (docs/attention-semantics.md): a row with a NaN or
// +inf score is NaN (O and LSE), a row whose scores are all -inf sees no key, a -inf score is a key of
// probability 0, and only the visible keys of a row are read (NaN/Inf elsewhere have no effect).
//
// Example: check one query row of a long causal problem against a kernel's output.
//   AttnProblem p; p.hq = 16; p.sq = p.sk = 16384; p.d = p.dv = 128; p.causal = Causal::bottom_right;
//   AttnInputs in = random_inputs(p, 7);
//   Reference r = reference_rows(p, in, {0, 8191, 16383});   // cost of 3 rows, not 16384
//   double o_row1_head2_x0 = r.o[r.o_index(p, 0, 1, 2, 0)];  // query row 8191
#include <cstddef>
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::oracle {

struct Reference {
  std::vector<double> o;    // [B, R, Hq, Dv] contiguous (BSHD), double
  std::vector<double> lse;  // [B, Hq, R], natural log; -inf for rows with no visible key
  std::vector<int> rows;    // the query rows computed (empty = all rows)
  // reference() only (empty from the emulation), same layout as o: how far O moves per unit of fp32
  // rounding of the scores, 4 (a_max + ln n) sd_P(v_x) + |LSE| |O_x|. sd_P(v_x) is the standard
  // deviation of column x of V under the row's probabilities, n the row's visible keys, a_max the
  // largest a_j = scale |q_i| |k_j| + |ALiBi_j| among keys of positive probability. The first term
  // bounds |sum_j p_j ds_j (v_jx - O_x)| (Cauchy-Schwarz) when every score errs by |ds_j| <= 4 u
  // (a_max + ln n) (the dot product's last rounding, the scale, a split's m + log l, the merge's exp
  // argument); the second is a split-KV merge's common weight error, exp(lse_t - lse) with lse
  // rounded once, which scales the whole row.
  std::vector<double> o_sens;
  // reference() only, same layout as lse: how far the LSE moves per unit of fp32 rounding of the
  // scores, 4 (a_max + ln n) (|sum_j p_j ds_j| <= max_j |ds_j|); with a soft-cap the dot product's
  // rounding counts damped by the cap's slope (tanh saturates) and the others at the capped score.
  std::vector<double> lse_sens;
  // reference() only, same layout as o: |v_x| / l of the row's key of largest score (its P is 1 before
  // normalisation): one relative rounding u of that key's P in a kernel (a kept, stale row max makes
  // it 2^x, not 1) moves the whole row by u * o_top, a common shift that the bias criterion allows.
  std::vector<double> o_top;

  int num_rows(const AttnProblem& p) const { return rows.empty() ? p.sq : static_cast<int>(rows.size()); }
  // The query row that result row r holds.
  int query_row(int r) const { return rows.empty() ? r : rows[static_cast<std::size_t>(r)]; }
  std::size_t o_index(const AttnProblem& p, int b, int r, int h, int x) const {
    return ((static_cast<std::size_t>(b) * num_rows(p) + r) * p.hq + h) * p.dv + x;
  }
  std::size_t lse_index(const AttnProblem& p, int b, int h, int r) const {
    return (static_cast<std::size_t>(b) * p.hq + h) * num_rows(p) + r;
  }
};

// Full problem, double, Eigen. Throws UsageError when p is invalid or the inputs do not fit it.
Reference reference(const AttnProblem& p, const AttnInputs& in);
// Only the query rows listed (any order, repeats allowed, each in [0, Sq)); cost is proportional to
// rows.size(). An empty list means every row, as in Reference::rows.
Reference reference_rows(const AttnProblem& p, const AttnInputs& in, const std::vector<int>& rows);

// What a correct fp16/bf16 kernel computes: scores with fp32 accumulation, soft-cap/ALiBi/mask and
// the softmax in fp32, the row sum l from the fp32 probabilities, P rounded to the input type before
// P·V (fp32 accumulation), O = (P·V) / l rounded to p.out_dtype, LSE = m + log(l) in fp32. With f32
// inputs nothing is rounded below fp32. Values are returned as doubles in the Reference layout.
Reference emulate_low_precision(const AttnProblem& p, const AttnInputs& in);
Reference emulate_low_precision_rows(const AttnProblem& p, const AttnInputs& in, const std::vector<int>& rows);

// Throws UsageError unless p is valid and in.q/k/v have p.dtype and at least the spans p needs.
void require_inputs_fit(const AttnProblem& p, const AttnInputs& in);

}  // namespace flashprobe::oracle
