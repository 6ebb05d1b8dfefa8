#pragma once
// The properties every subject must satisfy, one invariant each, written once and run by the engine
// (engine.h) for every client: `flashprobe gate`, the GoogleTest suite test_kernel_props and the
// mutation suite test_mutation. Each property draws its own Case from the subject's domain
// (draw_case, so that the engine knows the case a failure shrank to) and fails through
// RC_ASSERT/RC_FAIL with the case id and the numbers, so RapidCheck shrinks to a minimal problem.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flashprobe/gate/subject.h"
#include "flashprobe/oracle/check.h"

namespace flashprobe::gate {

// The oracle's options for a property's check: long rows (kSampledRowsFromKeys, kernel_domain.h) on
// kSampledRows sampled query rows.
oracle::CheckOptions check_options(const AttnProblem& p);

using Property = std::function<void(const Subject& s)>;
// What a property holds for its whole run (LargeOffsetsAgree: its device tensors under a lock shared
// by the gates on one machine): taken by the engine before the first case, released when the run
// ends. Throws DeviceMemoryShortage (core/error.h) when it cannot be had: the property is then not
// exercised for lack of memory, which the kernel is not blamed for.
using Hold = std::function<std::shared_ptr<void>(const Subject& s)>;
struct NamedProperty {
  std::string name;
  Property run;
  Hold hold = nullptr;
};

// A case of d, drawn through RapidCheck (shrinkable), and noted as the run's current case.
Case draw_case(const Domain& d);

// Agreement with the oracle on O and LSE under the tolerance model.
void prop_agrees_with_oracle(const Subject& s);
// The same with a sliding window in every problem, half of them with bounds on key-tile edges.
void prop_windows_agree_with_oracle(const Subject& s);
// Every output element written (outputs poisoned before), inputs untouched.
void prop_every_output_written(const Subject& s);
// No write outside the outputs (guard bands before and after every buffer).
void prop_guard_bands_intact(const Subject& s);
// No NaN/Inf the oracle does not have (and every Inf of the oracle, with its sign).
void prop_finite_where_oracle_is(const Subject& s);
// Two runs on the same inputs are bitwise equal.
void prop_deterministic(const Subject& s);
// A batch element's result does not depend on the others: bitwise equal to running it alone.
void prop_batch_invariant(const Subject& s);
// Appending K/V to a cache in chunks and attending after each chunk equals one-shot prefill.
void prop_chunked_append_equals_prefill(const Subject& s);
// The last query row run alone (the subject's decoder, subject.h) equals the last row of the
// subject's prefill.
void prop_decode_last_row_equals_prefill(const Subject& s);
// Decode results do not depend on the number of key splits (1, odd, many) beyond the tolerance.
void prop_decode_splits_agree(const Subject& s);

// The properties that apply to a subject family (SplitsAgree to decode, DecodeLastRowEqualsPrefill
// to every other), in the order they run.
std::vector<NamedProperty> properties_for(const std::string& family);
// Every property name, for help and error messages.
std::vector<std::string> all_property_names();
// Empty when the property can run on the subject's device; else the reason (LargeOffsetsAgree:
// memory; a host subject has no device memory).
std::string property_device_refusal(const std::string& property, const Subject& s);

// The kernel as the case runs it: a split-K kernel (decode) with the case's forced split count
// (Case::splits, KernelInfo::with_splits); any other kernel as it is.
kernels::KernelInfo as_drawn(const kernels::KernelInfo& k, const Case& c);

}  // namespace flashprobe::gate
