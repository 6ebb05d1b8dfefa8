#pragma once
// The backward kernels: dQ, dK, dV of L = sum(dO ∘ O) for an attention problem, from Q, K, V, the
// forward's O and LSE and the upstream gradient dO (oracle/backward.h defines what they compute),
// with the dispatcher's choice among them and a host runner that checks them the way run_kernel
// checks the forward (guard bands, poisoned outputs, inputs unchanged).
//
//   tiled_bwd      FlashAttention-2's algorithm in scalar fp32: one block per (key block, kv head,
//                  batch) accumulates dK and dV of its keys over every query row of the group; dQ is
//                  added across key blocks with fp32 atomics into a workspace, then scaled and rounded.
//   tiled_bwd_det  the same dK/dV; dQ by a second kernel, one block per query row walking the key
//                  blocks in order: a fixed reduction order, no floating-point atomics (bitwise equal
//                  over repeated runs).
// Both round P and dS to the input type before their products (as tensor-core kernels must), take
// any d, dv <= 256, f16/bf16/f32 and every mask and feature of AttnProblem.
//   mma_bwd        the same algorithm on the matrix unit, driven by an atom (mma.sync m16n8k16,
//                  NVIDIA sm_80+): S^T, dP^T, dV, dK per key block in registers, dQ with fp32 atomics.
//   mma_bwd_det    mma_bwd's dK/dV; dQ recomputed per query tile over the key tiles in order (no
//                  atomics). Both: f16/bf16 with out_dtype == dtype, d == dv in {64, 128}, every mask
//                  and feature; other problems and devices are refused with the reason.
//
// Example:
//   const BackwardKernelInfo* k = select_backward(dev, p, /*deterministic=*/true).kernel;
//   BackwardRunResult r = run_backward(*k, p, in, {dO, O, LSE});
//   oracle::check_backward(p, in, {dO, O, LSE}, r.grads);
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/select.h"

namespace flashprobe::kernels {

// Device pointers of one backward call: the forward's tensors (o and lse are the forward's outputs,
// read only), dO at O's strides in out_dtype, and the gradients in the input dtype at Q's, K's and
// V's strides.
struct BwdDeviceTensors {
  DeviceTensors fwd;
  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
};

struct BackwardKernelInfo {
  std::string name;
  std::string description;
  bool deterministic = false;  // bitwise-equal gradients over repeated runs
  std::function<Support(const DeviceInfo&, const AttnProblem&)> supports;
  std::function<std::size_t(const AttnProblem&)> workspace_bytes;
  // Where set: the problems on which select_backward takes this kernel ahead of the table's order (a
  // rule from measurements, its reason naming them), in the mode the kernel serves; elsewhere, and
  // where unset, the order decides.
  std::function<Support(const DeviceInfo&, const AttnProblem&)> preferred;
  // Enqueue on `stream`; does not synchronize. @pre supports(device, p); workspace holds
  // workspace_bytes(p) bytes of any content.
  std::function<void(const AttnProblem&, const BwdDeviceTensors&, void* workspace, Stream)> launch;
};

inline constexpr int kBwdMaxDim = 256;  // d and dv of the scalar backward kernels

const std::vector<BackwardKernelInfo>& backward_kernels();
const BackwardKernelInfo* find_backward_kernel(const std::string& name);
std::string backward_kernel_names();

struct BackwardSelection {
  const BackwardKernelInfo* kernel = nullptr;
  std::string reason;
  std::vector<Rejection> rejected;
  explicit operator bool() const { return kernel != nullptr; }
  std::string describe() const;
};
// The first kernel of backward_kernels() (mma_bwd, mma_bwd_det, tiled_bwd, tiled_bwd_det) that supports
// the problem; deterministic: only the deterministic ones.
BackwardSelection select_backward(const DeviceInfo& dev, const AttnProblem& p, bool deterministic);
BackwardSelection select_backward(const DeviceInfo& dev, const AttnProblem& p, bool deterministic,
                                  const BinaryTargets& bin, const std::vector<BackwardKernelInfo>& table);

// What a backward kernel reads besides Q, K, V (host copies, in the layouts of BwdDeviceTensors).
struct BackwardRunInputs {
  Tensor dout;             // out_dtype at p.o_strides()
  Tensor o;                // out_dtype at p.o_strides()
  std::vector<float> lse;  // [B, Hq, Sq]
};

struct BackwardRunResult {
  Tensor dq, dk, dv;  // p.dtype at p.q_strides() / k_strides() / v_strides()
  std::vector<std::string> guard_damage;
  std::vector<std::string> inputs_modified;
  std::int64_t unwritten = 0;  // logical gradient elements still holding the poison bits
  std::string first_unwritten;
  bool clean() const { return guard_damage.empty() && inputs_modified.empty() && unwritten == 0; }
  std::string describe() const;
};

// Uploads into guarded buffers, poisons dQ/dK/dV and the workspace, launches, synchronizes, and
// reports guard damage, modified inputs (Q, K, V, O, LSE, dO) and unwritten gradient elements.
// @throws NoDevice without a GPU; UsageError for an unsupported problem or inputs that do not fit.
BackwardRunResult run_backward(const BackwardKernelInfo& kernel, const AttnProblem& p, const AttnInputs& in,
                               const BackwardRunInputs& bw);

// Gradient elements (of the problem's shape) still holding poison, with the first one named (host).
std::int64_t count_unwritten_grads(const AttnProblem& p, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                   std::string* first = nullptr);

}  // namespace flashprobe::kernels
