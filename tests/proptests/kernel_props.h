#pragma once
// The properties every registered kernel must satisfy, one invariant each, written once
// and instantiated per kernel (test_kernel_props.cpp) and per mutant (test_mutation.cpp). Each
// property draws its own Case from the kernel's domain and fails through RC_ASSERT/RC_FAIL with the
// case id and the numbers, so RapidCheck shrinks to a minimal problem and prints the reproduction.
#include <functional>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/proptests/generators.h"
#include "kernel_domain.h"

namespace flashprobe::proptests {

// kernel_domain(k, dev) with the dtypes that FLASHPROBE_PROP_DTYPE keeps (restrict_dtypes_from_env).
Domain domain_for(const kernels::KernelInfo& k, const DeviceInfo& dev);

// The oracle's options for a property's check: long rows (kSampledRowsFromKeys, kernel_domain.h) on
// kSampledRows sampled query rows.
oracle::CheckOptions check_options(const AttnProblem& p);

using Property = std::function<void(const kernels::KernelInfo& k, const DeviceInfo& dev)>;
struct NamedProperty {
  std::string name;
  Property run;
};

// Agreement with the oracle on O and LSE under the tolerance model.
void prop_agrees_with_oracle(const kernels::KernelInfo& k, const DeviceInfo& dev);
// Every output element written (outputs poisoned before), inputs untouched.
void prop_every_output_written(const kernels::KernelInfo& k, const DeviceInfo& dev);
// No write outside the outputs (guard bands before and after every buffer).
void prop_guard_bands_intact(const kernels::KernelInfo& k, const DeviceInfo& dev);
// No NaN/Inf the oracle does not have (and every Inf of the oracle, with its sign).
void prop_finite_where_oracle_is(const kernels::KernelInfo& k, const DeviceInfo& dev);
// Two runs on the same inputs are bitwise equal.
void prop_deterministic(const kernels::KernelInfo& k, const DeviceInfo& dev);
// A batch element's result does not depend on the others: bitwise equal to running it alone.
void prop_batch_invariant(const kernels::KernelInfo& k, const DeviceInfo& dev);
// Appending K/V to a cache in chunks and attending after each chunk equals one-shot prefill.
void prop_chunked_append_equals_prefill(const kernels::KernelInfo& k, const DeviceInfo& dev);
// Decode of the last query row equals the last row of this kernel's prefill (decode vs k).
void prop_decode_last_row_equals_prefill(const kernels::KernelInfo& k, const DeviceInfo& dev);
// Decode results do not depend on the number of key splits (1, odd, many) beyond the tolerance.
void prop_decode_splits_agree(const kernels::KernelInfo& k, const DeviceInfo& dev);

// The properties that apply to a kernel (the decode-specific ones only to decode, ...).
std::vector<NamedProperty> properties_for(const std::string& kernel_name);
// Empty when the property can run on dev; else the device's reason (LargeOffsetsAgree: memory).
std::string property_device_refusal(const std::string& property, const kernels::KernelInfo& k, const DeviceInfo& dev);

// The kernel as the case runs it: a split-K kernel (decode) with the case's forced split count
// (Case::splits, KernelInfo::with_splits); any other kernel as it is.
kernels::KernelInfo as_drawn(const kernels::KernelInfo& k, const Case& c);

}  // namespace flashprobe::proptests
