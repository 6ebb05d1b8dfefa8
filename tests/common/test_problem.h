#pragma once
// Hand-made problems for tests, their shape in one call: d = dv, O in the inputs' dtype, contiguous
// BSHD until the test sets strides. A padded tensor is a contiguous one of wider rows and more
// positions, e.g. K in BHSD with rows padded to 40 elements and room for 80 keys:
//   AttnProblem p = test_problem(2, 4, 2, 5, 70, 24, DType::f16);  // batch, hq, hkv, sq, sk, d
//   p.k = contiguous_strides(TensorLayout::bhsd, 80, p.hkv, 40);
#include "flashprobe/core/problem.h"

namespace flashprobe::testing {

inline AttnProblem test_problem(int batch, int hq, int hkv, int sq, int sk, int d, DType dtype) {
  AttnProblem p;
  p.batch = batch;
  p.hq = hq;
  p.hkv = hkv;
  p.sq = sq;
  p.sk = sk;
  p.d = p.dv = d;
  p.dtype = p.out_dtype = dtype;
  return p;
}

}  // namespace flashprobe::testing
