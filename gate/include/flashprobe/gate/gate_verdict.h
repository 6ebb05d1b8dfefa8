#pragma once
// The verdict of one subject x property run of the gate, as pure functions so that the rules are
// CPU-tested: a property either held over the cases that ran, failed on one (shrunk), or was not
// exercised - zero cases ran to the end, because the subject refuses this device, takes none of the
// asked dtypes, refused every generated problem, every case was discarded, or the time budget was
// spent before its first case. A property that was not exercised proved nothing: it fails the gate
// unless the user allowed it by name (`flashprobe gate --allow-not-exercised NAME`); it is never
// counted as passed. A run the harness could not carry out for lack of device memory (an allocation
// of its own failed: DeviceMemoryShortage) is not exercised too, cause "memory", whatever number of
// cases had run before it: the kernel is not blamed, and the property is not counted as held.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flashprobe::gate {

enum class GateStatus { passed, failed, not_exercised };
std::string_view gate_status_name(GateStatus s);  // "passed", "failed", "not_exercised"

// Why zero cases ran (none: some did).
enum class Unexercised { none, device, dtype, refused, discarded, budget, memory };
// "", "device", "dtype", "refused", "discarded", "budget", "memory"
std::string_view unexercised_name(Unexercised c);

struct GateVerdict {
  GateStatus status = GateStatus::failed;
  Unexercised cause = Unexercised::none;
  std::string why;  // the failure, why nothing ran, or "" when passed
};

// What happened in a run, as the engine counted it.
struct RunFacts {
  std::string device_refusal;  // the subject (or the property) refuses this device: nothing was drawn
  std::string dtype_refusal;   // the asked dtypes leave the subject's domain without one
  std::string failure;         // the property's failure message (empty when no case failed)
  std::string device_memory;   // the harness's shortage of device memory (DeviceMemoryShortage's message), "" none
  long long cases_run = 0;     // cases that ran to the end (RapidCheck's successes)
  long long discarded = 0;     // cases given up on (generation found no accepted problem, a precondition)
  long long refusals = 0;      // problems the subject's supports() refused while drawing
  // Why, by reason, most frequent first (at most kRefusalReasons of them): the reason strings of
  // supports() and how many refusals gave each.
  std::vector<std::pair<std::string, long long>> refusal_reasons;
  bool budget_spent = false;   // the time budget stopped the run before it ran every case asked
};
GateVerdict gate_verdict(const RunFacts& f);
// The kRefusalReasons most frequent reasons of counts, most frequent first (ties by reason).
inline constexpr std::size_t kRefusalReasons = 3;
std::vector<std::pair<std::string, long long>> most_frequent(const std::map<std::string, long long>& counts);

// The properties a user allowed to be not exercised: by name, or every one ("all").
struct Allowance {
  std::set<std::string> properties;
  bool all = false;
  bool allows(const std::string& property) const { return all || properties.count(property) > 0; }
};

// Whether a verdict fails the gate: a failure always, a property not exercised unless allowed.
bool fails_gate(const GateVerdict& v, const std::string& property, const Allowance& allowed);

}  // namespace flashprobe::gate
