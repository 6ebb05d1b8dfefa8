#pragma once
// Arrays between Python and the C++ tensors. An input arrives as any DLPack or buffer-protocol array
// in host memory (numpy, a CPU torch tensor; nothing is copied on the way in) and is read element by
// element, at its own strides, into a Tensor laid out at the problem's strides. Its dims are in the
// order the problem's strides name for that tensor: [B, S, H, D], or [B, H, S, D] when the problem
// gives the tensor the contiguous BHSD strides (layout "bhsd").
#include <nanobind/ndarray.h>

#include <string>
#include <vector>

#include "bind.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::python {

using Array = nb::ndarray<nb::ro>;

// How a problem lays out one tensor: "bshd", "bhsd" (the contiguous BHSD strides: its arrays are
// [B, H, S, D]) or "strided" (any other strides; arrays [B, S, H, D]).
std::string layout_name(const Strides& given, int seq, int heads, int dim);

// What the problem says about one of Q, K, V, O.
struct TensorSpec {
  const char* name;  // "Q", "K", "V", "O"
  DType dtype;
  const char* dtype_field;  // "dtype" or "out_dtype"
  Strides strides;
  std::int64_t span;
  int batch, seq, heads, dim;
  bool bhsd;  // dims given as [B, H, S, D]
};
TensorSpec q_spec(const AttnProblem& p);
TensorSpec k_spec(const AttnProblem& p);
TensorSpec v_spec(const AttnProblem& p);
TensorSpec o_spec(const AttnProblem& p);

// The array as a Tensor at the spec's strides. bf16_view: the array holds the bit patterns of
// ml_dtypes.bfloat16 values (passed as a uint16 view). UsageError names the tensor, what it is and
// what the problem needs (dims, shape, dtype, host memory).
Tensor read_tensor(const Array& a, const TensorSpec& s, bool bf16_view);
// LSE [B, Hq, Sq] as float32 or float64.
std::vector<float> read_lse(const Array& a, const AttnProblem& p);

// A Tensor as (its flat numpy buffer, the dims, the strides in elements) in the spec's dim order, so
// that a view of the buffer is the tensor (the buffer shares the Tensor's memory; bf16 as uint16).
nb::tuple tensor_to_numpy(Tensor t, const TensorSpec& s);
// A contiguous numpy float64 array of this shape owning `values`.
nb::object doubles_to_numpy(std::vector<double> values, std::vector<std::size_t> shape);

}  // namespace flashprobe::python
