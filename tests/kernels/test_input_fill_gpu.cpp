// The device input fill (kernels/input_fill.h) against the host generator (core/counter_inputs.h):
// every byte of Q, K and V equal, for every dtype, input kind and layout the gate draws (padded rows,
// BHSD, fused QKV, capacity past the keys), and past the fill's grid-stride limit.
#include <gtest/gtest.h>

#include <vector>

#include "../common/gpu_skip.h"
#include "../common/test_problem.h"
#include "flashprobe/core/counter_inputs.h"
#include "flashprobe/kernels/input_fill.h"

namespace flashprobe {
namespace {

std::vector<InputDist> kinds() {
  InputDist normal, large, rising, near, logits;
  large.magnitude = 8;
  rising.magnitude = 16;
  rising.key_ramp = 1.0 / 32;
  near.key_jitter = 1.0 / 64;
  logits.magnitude = 256;
  return {normal, large, rising, near, logits};
}

std::vector<AttnProblem> problems() {
  std::vector<AttnProblem> v;
  for (DType t : {DType::f16, DType::bf16, DType::f32}) v.push_back(flashprobe::testing::test_problem(2, 6, 2, 37, 129, 64, t));
  AttnProblem padded = v[0];
  padded.k = contiguous_strides(TensorLayout::bhsd, 150, padded.hkv, 72);  // BHSD, rows padded to 72, room for 150 keys
  padded.v = contiguous_strides(TensorLayout::bshd, 150, padded.hkv, 64);  // BSHD with room for 150 keys
  v.push_back(padded);
  AttnProblem fused;
  fused.batch = 1;
  fused.hq = fused.hkv = 4;
  fused.sq = fused.sk = 50;
  fused.d = fused.dv = 32;
  const std::int64_t row = 3LL * fused.hq * fused.d;
  fused.q = {fused.sq * row, row, fused.d, 1};
  fused.k = fused.v = fused.q;
  v.push_back(fused);
  AttnProblem none = v[1];
  none.sk = 0;
  v.push_back(none);
  return v;
}

TEST(InputFill, DeviceBitsEqualTheHostGeneratorForEveryKindAndLayout) {
  FP_SKIP_WITHOUT_GPU();
  std::uint64_t seed = 1;
  for (const AttnProblem& p : problems())
    for (const InputDist& d : kinds()) {
      const AttnInputs dev = kernels::device_counter_inputs(p, ++seed, d, 0), host = counter_inputs(p, seed, d);
      EXPECT_EQ(dev.q.bytes, host.q.bytes) << p.id() << " seed " << seed;
      EXPECT_EQ(dev.k.bytes, host.k.bytes) << p.id() << " seed " << seed;
      EXPECT_EQ(dev.v.bytes, host.v.bytes) << p.id() << " seed " << seed;
    }
}

TEST(InputFill, EveryElementPastTheGridStrideLimit) {
  FP_SKIP_WITHOUT_GPU();
  AttnProblem p;  // K and V of 2^21 * 9 elements each: past 65536 blocks of 256 threads
  p.hq = p.hkv = 9;
  p.sq = 4;
  p.sk = 1 << 14;
  p.d = p.dv = 128;
  InputDist rising;
  rising.key_ramp = 1.0 / 32;
  const AttnInputs dev = kernels::device_counter_inputs(p, 99, rising, 0), host = counter_inputs(p, 99, rising);
  EXPECT_EQ(dev.k.bytes, host.k.bytes);
  EXPECT_EQ(dev.v.bytes, host.v.bytes);
}

}  // namespace
}  // namespace flashprobe
