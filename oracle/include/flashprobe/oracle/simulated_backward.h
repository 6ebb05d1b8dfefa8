#pragma once
// CPU stand-ins for backward kernels, correct ones and ones with a planted bug, used to calibrate and
// test the gradient tolerance model (BACKWARD_TOLERANCE.md, bench/calibrate_backward.cpp,
// tests/oracle/test_grad_check.cpp).
//
// Every one is scalar fp32 code shaped like FlashAttention-2's backward: key blocks of block_k keys;
// per block, P = exp(s - LSE) recomputed from the given LSE, dV += P^T dO with P rounded to the input
// type, dP = dO V^T, dS = P (dP - D) with D = rowsum(dO ∘ O) from the given O, dS rounded to the input
// type, dK += dS^T Q, and dQ accumulated across key blocks in fp32. The correct ones differ the ways
// real kernels legitimately do (block width, exp2 with log2(e) folded in, tensor-core-like chunked
// sums, the order dQ's block contributions arrive in); each buggy one plants one real bug.
//
// Example:
//   for (const auto& k : simulated_backward_kernels())
//     check_backward(p, in, bw, run_simulated_backward(k, p, in, bw)).pass;
#include <string>
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/oracle/backward.h"
#include "flashprobe/oracle/grad_check.h"

namespace flashprobe::oracle {

struct SimBwdConfig {
  int block_k = 64;         // keys per block
  bool exp2 = false;        // P = exp2(s log2(e) - LSE log2(e))
  int dot_chunk = 0;        // 0: sequential fp32 sums; n: exact n-term chunks truncated into fp32
  bool dq_reverse = false;  // dQ's block contributions added last block first (atomics arrive in any order)
  // Planted bugs (all false in a correct kernel).
  bool no_rowsum_d = false;       // dS = P dP: rowsum(dO ∘ O) not subtracted
  bool gqa_unsummed = false;      // dK, dV of a kv head from the last query head of its group only
  bool no_softcap_grad = false;   // the soft-cap's 1 - tanh² factor left out of dS
  bool no_causal = false;         // the backward ignores the causal mask (the forward applied it)
  bool truncate = false;          // dQ, dK, dV rounded toward zero
  bool dq_race = false;           // odd rows lose key block 1's dQ update (a non-atomic accumulation race)
  bool dk_unscaled = false;       // dK not multiplied by the softmax scale
};

struct SimulatedBackward {
  std::string name;
  bool correct = true;
  std::string what;  // one line
  SimBwdConfig cfg;
};

const std::vector<SimulatedBackward>& simulated_backward_kernels();
const SimulatedBackward& simulated_backward_kernel(const std::string& name);  // throws UsageError for unknown names
// dQ, dK, dV in p.dtype at p.q_strides(), k_strides(), v_strides(). bw.o and bw.lse must be given.
KernelGradients run_simulated_backward(const SimulatedBackward& k, const AttnProblem& p, const AttnInputs& in,
                                       const BackwardInputs& bw);

}  // namespace flashprobe::oracle
