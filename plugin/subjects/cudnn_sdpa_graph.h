// cuDNN's fused attention (flash SDPA forward) as a cuDNN backend operation graph and its execution
// plan, for the cuDNN plug-in subject (cudnn_sdpa_plugin.cpp) and its diagnostic
// (cudnn_sdpa_diagnose.cpp); cuDNN itself is cudnn_backend.h's.
//
// Two forms, as NVIDIA's cudnn-frontend lowers its SDPA node (read at NVIDIA/cudnn-frontend 3929da2):
// from cuDNN 9.13.1 one SDPA forward operation on Q, K, V, O, stats and scale (the frontend's choice
// without a mask before 9.21), and the composite graph cuDNN 9.x matches before 9.21: S = Q·Kᵀ (Kᵀ by
// strides, f32 compute), S *= scale (a by-value f32), for causal GEN_INDEX row/col (+ sk - sq as
// by-value int32 for bottom-right) CMP_GE and BINARY_SELECT with a by-value -inf, softmax as
// max / sub / exp / sum / div with the stats max + log(sum) written (the LSE, natural log), O = P·V.
// Every intermediate is a virtual f32 tensor except P, the softmax output and the second matmul's A,
// which the frontend sets to the input type (f16/bf16) as "a requirement by cudnn backend"; this
// plug-in's first graph had P in f32 and cuDNN 9.19 gave it no engine (measured on an H200).
#pragma once

#include "cudnn_backend.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashprobe/plugin/flashprobe_plugin.h"

namespace fp_cudnn {

// The variant pack's unique ids: the graph's non-virtual tensors.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kMaskValue, kSk, kSq };

// Which graph expresses the attention: the unified one SDPA forward operation (cuDNN 9.13.1+; no
// mask before 9.21), the composite pointwise / reduction / matmul graph, or (automatic) the unified
// one where it applies with the composite one as its fallback, as the frontend prefers them.
enum class Form { automatic, unified, composite };
const char* form_name(Form f);

struct BuildOptions {
  Form form = Form::automatic;
  // P (bmm2's A) in the input type, as the engine requires; false builds the f32 P of this plug-in's
  // first graph, so that the diagnostic shows the difference on the device.
  bool p_in_io_type = true;
  // 0: stop at the first plan (the plug-in). n > 0 (the diagnostic): query every source (heuristics
  // A, FALLBACK, every engine by global index), tracing each outcome, and build plans for up to n
  // configurations of each until one is made.
  int plans_per_source = 0;
};

// A finalized execution plan and every descriptor it refers to.
struct Plan {
  std::vector<std::unique_ptr<Desc>> keep;
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
  std::string source;  // "composite graph, heuristics A, configuration 0", "unified SDPA operation, engine 7 by index"
};

// What the graph does not express or cuDNN's SDPA does not take, naming the field; "" when cuDNN is
// asked (by build()).
std::string refusal(const fp_problem_v1& p);

// Builds the graph for p (which refusal() in the plug-in has accepted) and its plan. Throws
// CudnnError naming the step and cuDNN's status when a descriptor does not finalize, and
// "cuDNN <version> has no engine for this graph: <each form: what each source gave>" when no plan is made.
std::unique_ptr<Plan> build(const fp_problem_v1& p, const BuildOptions& o = {});

// The value masked scores take (the by-value kMaskValue): -inf, the lowest float before cuDNN 9.10.
float mask_value();

}  // namespace fp_cudnn
