#pragma once
// The mask and layout features every tensor-core backward kernel takes, one per index (0: none), for
// the tests that walk a kernel's supports() over them (test_backward_select, test_backward_amd).
//   for (int f = 0; f < kBackwardFeatures; ++f) EXPECT_TRUE(k->supports(dev, with_backward_feature(p, f)));
#include "flashprobe/core/problem.h"

namespace flashprobe::testing {

inline constexpr int kBackwardFeatures = 7;

inline AttnProblem with_backward_feature(AttnProblem p, int feature) {
  switch (feature) {
    case 1: p.causal = Causal::bottom_right; break;
    case 2: p.causal = Causal::top_left; p.window_left = 5; p.window_right = 0; break;
    case 3: p.softcap = 30; break;
    case 4: p.alibi_slopes = {0.5, 0.25, 0.125, 0.0625, 0.03, 0.01}; break;
    case 5: p.seqlens_k = {0, 70}; break;
    case 6: p.with_layout(TensorLayout::bhsd); break;
    default: break;
  }
  return p;
}

}  // namespace flashprobe::testing
