#pragma once
// Host tensors stored in their element type (f16/bf16 as bits, f32 as floats), read and written as
// doubles. Attention inputs are drawn fresh per case and never zero: zeros hide unwritten outputs.
#include <cstdint>
#include <vector>

#include "flashprobe/core/dtype.h"
#include "flashprobe/core/problem.h"

namespace flashprobe {

struct Tensor {
  DType dtype = DType::f32;
  std::vector<std::uint8_t> bytes;

  Tensor() = default;
  Tensor(DType t, std::int64_t n) : dtype(t), bytes(static_cast<std::size_t>(n) * dtype_size(t)) {}
  std::int64_t size() const { return static_cast<std::int64_t>(bytes.size() / dtype_size(dtype)); }
  double get(std::int64_t i) const;
  void set(std::int64_t i, double v);  // rounds to nearest even in dtype
  const void* data() const { return bytes.data(); }
  void* data() { return bytes.data(); }
};

struct AttnInputs {
  Tensor q, k, v;
};

struct AttnOutputs {
  Tensor o;                // out_dtype, o_span() elements at o_strides()
  std::vector<float> lse;  // [B, Hq, Sq]
};

// How inputs are drawn: normal(0, magnitude) rounded to the dtype, with no element exactly zero.
struct InputDist {
  double magnitude = 1.0;
  double key_jitter = -1;  // >= 0: keys are one shared random vector plus jitter*noise (nearly identical keys)
  // > 0: key j's elements are scaled by (1 + key_ramp * j), so that scores grow along the keys and a
  // row's running max rises on every key tile (a kernel that stops rescaling overflows).
  double key_ramp = 0;
};
AttnInputs random_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist = {});
// n draws of N(0, 1) rounded to t, a draw that rounds to zero redrawn (the same per-element rule as
// random_inputs), from a generator seeded with `seed`.
Tensor random_normal(DType t, std::int64_t n, std::uint64_t seed);

inline std::int64_t offset(const Strides& s, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t x) {
  return b * s.b + t * s.s + h * s.h + x * s.d;
}

}  // namespace flashprobe
