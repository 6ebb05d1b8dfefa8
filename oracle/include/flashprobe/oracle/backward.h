#pragma once
// The gradients of attention: given the upstream gradient dO, the exact dQ, dK, dV of
// L = sum(dO ∘ O) for every AttnProblem feature, and the same gradients computed the way
// FlashAttention-2's fp16/bf16 backward computes them (the yardstick of grad_check.h).
//
// Per (batch, query head), with x = scale q_i·k_j, t = cap tanh(x / cap) (or x without soft-cap),
// s = t - slope |diag_i - j| (ALiBi), P = softmax over the visible keys of s:
//   dV_j += P_ij dO_i          dP_ij = dO_i · V_j          D_i = dO_i · O_i = sum_j P_ij dP_ij
//   dS_ij = P_ij (dP_ij - D_i) (d/ds)     dX_ij = dS_ij (1 - tanh²(x / cap)) (d/dx)
//   dQ_i += scale sum_j dX_ij K_j          dK_j += scale sum_i dX_ij Q_i
// dK and dV of a kv head are summed over the query heads of its group (GQA/MQA). A row that sees no
// key has dQ = 0; a key no row sees (masked, or past the batch's seqlens_k) has dK = dV = 0.
//
// Layouts: dO is read at p.o_strides() in p.out_dtype (O's layout and type). Results are dense BSHD
// doubles: dQ [B, Sq, Hq, D], dK [B, Sk, Hkv, D], dV [B, Sk, Hkv, Dv].
//
// Example:
//   AttnInputs in = random_inputs(p, 1);
//   Tensor dO = random_normal(p.out_dtype, p.o_span(), 2);
//   Gradients g = reference_backward(p, in, dO);
//   double dk = g.dk[g.dk_index(p, 0, 5, 1, 0)];   // batch 0, key 5, kv head 1, x 0
#include <cstddef>
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::oracle {

// What the exact reference measures on the way (grad_check.h builds its floor from them; each is a
// maximum over the problem, before any cancellation):
struct GradTerms {
  double dq_terms = 0;  // max_i scale sum_j |dX_ij| max|K|
  double dk_terms = 0;  // max_j scale sum_(i, h in group) |dX_ij| max|Q|
  double dv_terms = 0;  // max_j sum_(i, h in group) P_ij max|dO|
  double p_colsum = 0;  // max_j sum_(i, h in group) P_ij
  double e_d = 0;       // max_i sum_x |dO_ix| max|V|: bounds |dP| and |D|
  double s_max = 0;     // scale max|q| max|k| (row norms): bounds the logits
  double q_max = 0, k_max = 0, v_max = 0, do_max = 0;  // largest |element|
  // The largest gradient any signs of its terms could give, |dS_ij| <= P_ij (|dP_ij| + |D_i|) times the
  // soft-cap factor: a bound above it admits every plausible gradient (grad_check.h: cannot bound).
  double dq_plausible = 0;  // max_i scale sum_j P_ij (|dP_ij| + |D_i|) f_ij max|K|
  double dk_plausible = 0;  // max_j scale sum_(i, h in group) P_ij (|dP_ij| + |D_i|) f_ij max|Q|
  double dq_mean_terms = 0;  // visible keys per (row, head) that sees a key, averaged
  double dk_mean_terms = 0;  // (row, head of the group) pairs per key some row sees, averaged
};

struct Gradients {
  std::vector<double> dq, dk, dv;  // dense BSHD, see above
  GradTerms terms;                 // filled by reference_backward only

  static std::size_t dq_index(const AttnProblem& p, int b, int i, int h, int x) {
    return ((static_cast<std::size_t>(b) * p.sq + i) * p.hq + h) * p.d + x;
  }
  static std::size_t dk_index(const AttnProblem& p, int b, int j, int h, int x) {
    return ((static_cast<std::size_t>(b) * p.sk + j) * p.hkv + h) * p.d + x;
  }
  static std::size_t dv_index(const AttnProblem& p, int b, int j, int h, int x) {
    return ((static_cast<std::size_t>(b) * p.sk + j) * p.hkv + h) * p.dv + x;
  }
};

// What a backward kernel reads besides Q, K, V: the upstream gradient and the forward's outputs.
struct BackwardInputs {
  Tensor dout;             // dO: p.out_dtype at p.o_strides()
  Tensor o;                // the forward's O (p.out_dtype, p.o_strides()); empty = the emulated forward's
  std::vector<float> lse;  // the forward's LSE [B, Hq, Sq]; empty = the emulated forward's
};

// Exact gradients in double (Eigen) from the stored values of Q, K, V and dO; O and P are the exact
// ones (the forward is recomputed here, nothing of a kernel's forward is used). Throws UsageError
// when p is invalid or a tensor does not fit it.
Gradients reference_backward(const AttnProblem& p, const AttnInputs& in, const Tensor& dout);

// FlashAttention-2's backward in fp32: scores from Q and K with fp32 sums, P = exp(s - LSE) from the
// given LSE, P rounded to the input type before dV = P^T dO, D = rowsum(dO ∘ O) in fp32 from the
// given O, dS = P (dP - D) times the soft-cap factor in fp32, dS rounded to the input type before
// dQ = dS K and dK = dS^T Q, fp32 accumulation (dK, dV over the whole group), the scale in fp32,
// each gradient rounded to the input type once. f32 inputs round nothing below fp32.
Gradients emulate_backward(const AttnProblem& p, const AttnInputs& in, const BackwardInputs& bw);

// Throws UsageError unless the tensors of bw fit p (dO required; O and LSE when given).
void require_backward_inputs_fit(const AttnProblem& p, const BackwardInputs& bw);

}  // namespace flashprobe::oracle
