#pragma once
// Attention inputs from the counter-based generator (counter_rng.h) on the host: the values the
// device fill (kernels/include/flashprobe/kernels/input_fill.h) writes, bit for bit. The property
// gate's cases draw their inputs this way (proptests' Case::make_inputs); random_inputs (tensor.h)
// keeps its sequential stream for everything else.
//
//   AttnInputs in = counter_inputs(p, 7);                 // normal(0, 1), never zero
//   InputDist d; d.key_ramp = 1.0 / 32;                    // rising keys
//   AttnInputs r = counter_inputs(p, 7, d);
#include <cstdint>

#include "flashprobe/core/counter_rng.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe {

// The generator's parameters for p's inputs drawn from dist with this seed (mixed with p's id, so that
// every change of the problem draws fresh values).
counter_rng::Spec counter_spec(const AttnProblem& p, std::uint64_t seed, const InputDist& dist);

// Every element of Q, K and V (padding and capacity included, as random_inputs fills them).
AttnInputs counter_inputs(const AttnProblem& p, std::uint64_t seed, const InputDist& dist = {});

}  // namespace flashprobe
