#pragma once
// How much work the oracle's engine has for a problem, in flops for threads_for (parallel.h): the
// products' flops plus kFlopsPerElement per O element (its reference and emulation: sensitivities,
// roundings, the row's output). Problems of few keys and many rows (Sk 5, thousands of O elements)
// cost far more than their products' flops, which alone left them on one thread.
#include "flashprobe/core/problem.h"

namespace flashprobe::oracle::detail {

inline constexpr double kFlopsPerElement = 100;
// check() computes the reference and the emulation at once from this much work (about 0.1 ms).
inline constexpr double kBesideWork = 2e5;

// rows: the query rows computed per batch element (Sq, or the sampled rows).
inline double engine_work(const AttnProblem& p, double rows) {
  double w = kFlopsPerElement * p.batch * rows * p.hq * p.dv;
  for (int b = 0; b < p.batch; ++b) w += 2.0 * p.hq * rows * p.keys(b) * (p.d + p.dv);
  return w;
}

}  // namespace flashprobe::oracle::detail
