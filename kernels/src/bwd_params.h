#pragma once
// BwdParams: the one argument of the backward kernels (src/bwd.cuh), plain data like Params.
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/bug.h"
#include "flashprobe/kernels/params.h"

namespace flashprobe::kernels {

struct BwdParams {
  Params f;           // the problem and the forward's tensors: f.o and f.lse are read, never written
  const void* dout;   // dO at f.os, f.out_dtype
  void* dq;           // f.dtype at f.qs
  void* dk;           // f.dtype at f.ks
  void* dv;           // f.dtype at f.vs
  float* dvec;        // workspace: rowsum(dO ∘ O), [B, Hq, Sq]
  float* dq_acc;      // workspace of the atomic mode: dQ / scale in fp32, [B, Sq, Hq, D] contiguous; else null
  int dout_rows16;    // dO's rows move in 16-byte chunks (Params::o_rows16's rule, applied to dout)
};

// Workspace bytes: dvec, plus dq_acc unless deterministic.
std::size_t backward_workspace_bytes(const AttnProblem& p, bool deterministic);
// @throws UsageError as make_params, or when a gradient or dO pointer is null.
BwdParams make_bwd_params(const AttnProblem& p, const BwdDeviceTensors& t, void* workspace, bool deterministic);

}  // namespace flashprobe::kernels

namespace flashprobe::kernels::detail {
template <Bug bug>
void launch_backward(const BwdParams& p, bool deterministic, Stream s);
}  // namespace flashprobe::kernels::detail
