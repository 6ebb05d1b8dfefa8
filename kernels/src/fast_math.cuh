#pragma once
// Fast-math primitives of the kernels' softmax, one spelling per capability (flashprobe/atoms/caps.h).
#include <cmath>

#include "flashprobe/atoms/caps.h"
#include "flashprobe/core/device.cuh"

namespace flashprobe::kernels::dev {

// 2^x for softmax terms in the hot loops: one MUFU.EX2 (ex2.approx.ftz, 2 ulp as exp2f has). exp2f
// keeps results below 2^-126 as subnormals, which costs a compare and two predicated multiplies per
// call around the same instruction (a sixth of the mma kernel's per-tile instructions at D = 128);
// such a term is below anything a 16-bit P or the f32 row sum can carry, so it is flushed to zero.
// -inf gives 0.
FP_DEV float exp2_ftz(float x) {
#if defined(FP_CAP_PTX)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

// 1 / l for a softmax row sum, l >= 1 (the row's max term contributes exp2(0) = 1): the hardware
// reciprocal (about 1 ulp of f32, far below the 16-bit output's rounding) without the IEEE
// division's slow path; l = 0 (a row that saw no key) gives 0, so that O = 0.
FP_DEV float inv_row_sum(float l) {
#if defined(FP_CAP_PTX)
  return l > 0.f ? __fdividef(1.f, l) : 0.f;
#else
  return l > 0.f ? 1.f / l : 0.f;
#endif
}
}  // namespace flashprobe::kernels::dev
