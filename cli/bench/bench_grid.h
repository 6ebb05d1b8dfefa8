#pragma once
// The benchmark grid of `flashprobe bench` and the FLOP/byte model of a case.
//
//   prefill: S in {512, ..., 16384}, D in {64, 128}, causal and not, f16 and bf16, with batch * S =
//            16k tokens and H * D = 2048 (the FlashAttention benchmark convention: the GPU is full
//            at every S); the Whisper-medium encoder shape B in {1, 4}, H = 16, S = 1500, D = 64.
//   decode:  Sq = 1, Sk in {1k, ..., 32k}, B in {1, 8}, H = 32, D = 128.
//   headdim: on request only (--group headdim, headdim_grid()): every head dim of the tensor-core
//            paths (multiples of 8 up to 256) and d != dv (192/128, 160/128, 128/192, 64/128), S = 4096, B = 4,
//            H = 16, causal and not, f16 and bf16.
// FLOPs = 2 * B * H * Sq * Sk * (D + Dv), halved for causal with Sq == Sk (only the lower triangle is
// computed). Bytes = Q + K + V + O read/written once (the traffic floor; LSE is counted too).
//   custom:  problems from JSON files (`flashprobe bench --problem`); their FLOPs count the visible
//            (query, key) pairs exactly: 2 * (D + Dv) per pair, summed over batch, heads and rows.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flashprobe/core/problem.h"

namespace flashprobe::bench {

struct BenchCase {
  std::string group;  // "prefill", "whisper", "decode"
  AttnProblem p;
  double flops() const;
  double bytes() const;
  // The backward (bench --backward): FlashAttention's convention, 2.5x the forward's FLOPs (five
  // GEMMs against two); bytes = Q, K, V, O, dO, LSE read and dQ, dK, dV written once.
  double backward_flops() const { return 2.5 * flops(); }
  double backward_bytes() const;
  std::string id() const { return group + ":" + p.id(); }
};

// The full grid, or a reduced one (`quick`: a few shapes per group, for smoke runs). Without the
// headdim group, which only --group headdim adds (it would triple the default run).
std::vector<BenchCase> bench_grid(bool quick);
std::vector<BenchCase> headdim_grid();

// The head-dim metric of issue 26: a tensor-core kernel's TFLOP/s (real d/dv FLOPs) at (d, dv)
// over its TFLOP/s at its tile class of (d, dv) (registry.h: the next larger (d, dv) with its own
// instantiation), same dtype and mask, from one run's results (the records of cmd_bench:
// kernel, group, problem, tflops). Timings of group headdim by kernels with tile classes (mma,
// wgmma and their variants) whose (d, dv) is not its class; a case whose class was not timed gets
// no row. `ok`: ratio >= kHeadDimTarget.
inline constexpr double kHeadDimTarget = 0.9;
struct HeadDimRatio {
  std::string kernel, dtype;
  bool causal = false;
  int d = 0, dv = 0, class_d = 0, class_dv = 0;
  double tflops = 0, class_tflops = 0, ratio = 0;
  bool ok() const { return ratio >= kHeadDimTarget; }
};
std::vector<HeadDimRatio> headdim_ratios(const nlohmann::json& results);

// Group "custom": every problem in the files, each a problem JSON object (as `flashprobe run
// --problem` reads) or an array of them (a sweep). Throws UsageError naming the file and entry for
// unreadable JSON, unknown fields and invalid problems.
std::vector<BenchCase> custom_cases(const std::vector<std::string>& files);

}  // namespace flashprobe::bench
