#pragma once
// `flashprobe bench --backward`: one backward kernel on one benchmark case (its FLOP and byte model:
// BenchCase::backward_flops / backward_bytes).
#include <string>

#include "bench/bench_grid.h"
#include "bench/timer.h"
#include "flashprobe/kernels/backward.h"

namespace flashprobe::bench {

struct BackwardTiming {
  Timing t;
  std::string forward_by;  // the forward kernel that produced O and LSE ("" if none took the problem)
};

// Uploads one input set (Q, K, V and dO random; O and LSE from the forward kernel the dispatcher
// picks for the problem, zeros if none does) and times `k` with time_graph (timing "graph") or
// time_device ("launch"). @pre k.supports(device, c.p).
BackwardTiming time_backward(const kernels::BackwardKernelInfo& k, const BenchCase& c, const std::string& timing,
                             double min_seconds);

}  // namespace flashprobe::bench
