#pragma once
// The counter-based input generator (core/counter_rng.h) on the device: fills Q, K and V with the
// bits counter_inputs(p, seed, dist) (core/counter_inputs.h) computes on the host, element for
// element, so a case's inputs cost a kernel launch and a download instead of a host loop over every
// element. The property gate's cases (proptests' Case::make_inputs on the host) are made this way
// when a device is present; the host reproduces them for a replay (Python, the CPU tests).
//
// Example:
//   AttnInputs in = device_counter_inputs(p, c.seed, c.input_dist());  // == counter_inputs(p, c.seed, ...)
#include <cstdint>

#include "flashprobe/core/counter_rng.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {

struct InputFillTensors {
  void* q = nullptr;  // q_span(), k_span(), v_span() elements of p.dtype
  void* k = nullptr;
  void* v = nullptr;
  const std::int32_t* table = nullptr;  // the device copy of counter_rng::normal_table() (kTableSize entries)
};

// Every element of the three spans: the plain draw, then K's logical elements under the spec's key
// kind. @throws NoDevice in a build without a GPU backend.
void launch_input_fill(const AttnProblem& p, const counter_rng::Spec& s, const InputFillTensors& t, Stream stream);

// Q, K and V filled on the device (guard-banded buffers poisoned first, so an element the fill misses
// is NaN; its guard bands checked after) and downloaded. `spot_checks` elements of each tensor (the
// first, the last and seeded others; K's logical elements included) are recomputed on the host and
// must match: std::logic_error names the first that does not (the device and host generators differ).
// @throws NoDevice without a GPU.
AttnInputs device_counter_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist, int spot_checks = 64);

// Fills q, k and v (device buffers of p's spans, e.g. a CaseArena's) in place, queued on the default
// stream; nothing is synchronised, checked or downloaded (the caller does: run_in_arena).
// @throws NoDevice without a GPU.
void fill_counter_inputs_at(const AttnProblem& p, std::uint64_t seed, const InputDist& dist, void* q, void* k, void* v);

// The spot checks of device_counter_inputs on inputs in hand (host code, every build): the first, the
// last and seeded others of each tensor (K's logical elements under its kind) against the host's bits.
// @throws std::logic_error naming the first element that differs.
void spot_check_counter_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist, const AttnInputs& in,
                               int spot_checks = 64);

}  // namespace flashprobe::kernels
