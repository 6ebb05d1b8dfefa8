#pragma once
// RapidCheck generators for attention problems: the case generator of cases.h (the domain, the
// biased draws, the input kinds) driven by RapidCheck, which supplies every choice and shrinks it.
//
// Example:
//   Domain d; d.head_dims = {64, 128}; d.tile_m = 64; d.tile_n = 64;
//   RC_GTEST_PROP(X, Y, ()) { const Case c = *gen_case(d); ... }
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "flashprobe/proptests/cases.h"

namespace flashprobe::proptests {

rc::Gen<AttnProblem> gen_problem(const Domain& d);
rc::Gen<Case> gen_case(const Domain& d);

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
