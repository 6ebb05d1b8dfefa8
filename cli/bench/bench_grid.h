#pragma once
// The benchmark grid of `flashprobe bench` and the FLOP/byte model of a case.
//
//   prefill: S in {512, ..., 16384}, D in {64, 128}, causal and not, f16 and bf16, with batch * S =
//            16k tokens and H * D = 2048 (the FlashAttention benchmark convention: the GPU is full
//            at every S); the Whisper-medium encoder shape B in {1, 4}, H = 16, S = 1500, D = 64.
//   decode:  Sq = 1, Sk in {1k, ..., 32k}, B in {1, 8}, H = 32, D = 128.
// FLOPs = 4 * B * H * Sq * Sk * D, halved for causal with Sq == Sk (only the lower triangle is
// computed). Bytes = Q + K + V + O read/written once (the traffic floor; LSE is counted too).
//   custom:  problems from JSON files (`flashprobe bench --problem`); their FLOPs count the visible
//            (query, key) pairs exactly: 2 * (D + Dv) per pair, summed over batch, heads and rows.
#include <string>
#include <vector>

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

// The full grid, or a reduced one (`quick`: a few shapes per group, for smoke runs).
std::vector<BenchCase> bench_grid(bool quick);

// Group "custom": every problem in the files, each a problem JSON object (as `flashprobe run
// --problem` reads) or an array of them (a sweep). Throws UsageError naming the file and entry for
// unreadable JSON, unknown fields and invalid problems.
std::vector<BenchCase> custom_cases(const std::vector<std::string>& files);

}  // namespace flashprobe::bench
