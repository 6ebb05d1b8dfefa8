#pragma once
// RapidCheck generators for attention problems, biased toward the shapes that broke real kernels.
//
// A kernel declares what it supports as a `Domain` (head dims, dtypes, feature switches, a tile
// height, a predicate); gen_case(domain) draws only problems inside it, so a property never fails
// for an unsupported shape. The bias, per field (see gen_* in generators.cpp for the weights):
//   Sk: 0, 1, 2, 3, 5, 7 (softmax reductions over non-power-of-two blocks — the Sk = 3 bug),
//       tile-1, tile, tile+1, 2*tile-1, 2*tile+1 (tail tiles), else uniform up to the size budget
//   Sq: 1 (decode), the gap 2..tile-1 (partial query tiles), Sq > Sk and Sq < Sk under causal masks
//   D:  the domain's dims, plus odd ones (40, 59, 111) where the kernel claims any D
//   GQA ratios 1, 2, 3, 5, 6, 8 and MQA; kv_offset > 0; per-batch key lengths with zeros;
//   fused-QKV strides and BHSD; windows that leave rows empty; scores near the fp16 range
//   (large-magnitude inputs); nearly identical keys.
// Inputs are drawn fresh for every case from the case's own seed (never zeros).
//
// Example:
//   Domain d; d.head_dims = {64, 128}; d.tile_m = 64; d.tile_n = 64;
//   RC_GTEST_PROP(X, Y, ()) { const Case c = *gen_case(d); ... }
#include <rapidcheck.h>

#include <functional>
#include <string>
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::proptests {

struct Domain {
  std::vector<int> head_dims{64, 128};  // D = Dv values allowed
  bool any_head_dim = false;            // kernel claims any D (then odd dims are drawn too)
  bool dv_differs = false;              // Dv != D allowed
  std::vector<DType> dtypes{DType::f16, DType::bf16};
  int tile_m = 64;   // query tile height (for the Sq gap) and key tile width (for Sk tails)
  int tile_n = 64;
  int max_sq = 300;  // upper bounds at full size; scaled by RapidCheck's size
  int max_sk = 600;
  int max_batch = 3;
  int max_hq = 8;
  bool causal = true, top_left = true, windows = true, softcap = true, alibi = true;
  int window_odds = 5;  // a sliding window in 1 of window_odds problems (1: every problem)
  bool edge_windows = false;  // half the windows put their bounds on key-tile edges (generators.cpp)
  bool seqlens = true, strides = true, kv_offset = true;
  bool sk_zero = true;
  // Last word: the kernel's own predicate (e.g. its select()/supports()); problems it refuses are
  // re-drawn (a domain that rarely satisfies it makes RapidCheck give up, which fails loudly).
  std::function<bool(const AttnProblem&)> supports;
};

// large_magnitude: scores of order 1e2-1e3 before the softmax; rising_keys: the same with keys that
// grow along the sequence (InputDist::key_ramp), so that every key tile raises a row's max by far
// more than 2^8 (a kernel that keeps a stale max, mma's conditional rescale, must rescale there).
enum class InputKind { normal, large_magnitude, near_identical_keys, rising_keys };

struct Case {
  AttnProblem problem;
  std::uint64_t seed = 0;
  InputKind inputs = InputKind::normal;
  std::string id() const;
  AttnInputs make_inputs() const;
};

rc::Gen<AttnProblem> gen_problem(const Domain& d);
rc::Gen<Case> gen_case(const Domain& d);

std::string_view input_kind_name(InputKind k);

// The budget of a property run from the environment, so one binary serves a 2-minute CI gate and an
// hour-long soak: FLASHPROBE_PROP_CASES (max_success), FLASHPROBE_PROP_MAX_SIZE, FLASHPROBE_PROP_SEED.
// Call before the first property runs (the tests' main does); RC_PARAMS, if set, wins.
void apply_budget_from_env();

// A soak runs one dtype at a time (FLASHPROBE_PROP_DTYPE = f16, bf16, f32, ...) so that its case
// counts are per kernel and dtype. Returns the domain's dtypes kept by `value` (all of them when
// value is null or empty; none when the kernel does not take that dtype); a value that names no
// dtype throws UsageError naming it and the allowed names.
std::vector<DType> restrict_dtypes(const std::vector<DType>& dtypes, const char* value);
// restrict_dtypes(d.dtypes, getenv("FLASHPROBE_PROP_DTYPE")) applied to d.
void restrict_dtypes_from_env(Domain& d);

}  // namespace flashprobe::proptests

namespace flashprobe {
// RapidCheck prints counterexamples with these.
void showValue(const AttnProblem& p, std::ostream& os);
namespace proptests {
void showValue(const Case& c, std::ostream& os);
}
}  // namespace flashprobe
