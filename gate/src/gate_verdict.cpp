#include "flashprobe/gate/gate_verdict.h"

#include <algorithm>

namespace flashprobe::gate {

std::string_view gate_status_name(GateStatus s) {
  switch (s) {
    case GateStatus::passed: return "passed";
    case GateStatus::failed: return "failed";
    case GateStatus::not_exercised: return "not_exercised";
  }
  return "?";
}

std::string_view unexercised_name(Unexercised c) {
  switch (c) {
    case Unexercised::none: return "";
    case Unexercised::device: return "device";
    case Unexercised::dtype: return "dtype";
    case Unexercised::refused: return "refused";
    case Unexercised::discarded: return "discarded";
    case Unexercised::budget: return "budget";
    case Unexercised::memory: return "memory";
  }
  return "?";
}

std::vector<std::pair<std::string, long long>> most_frequent(const std::map<std::string, long long>& counts) {
  std::vector<std::pair<std::string, long long>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > kRefusalReasons) v.resize(kRefusalReasons);
  return v;
}

namespace {
// "; most often: 'a' (9000), 'b' (12)" or "".
std::string reasons_text(const RunFacts& f) {
  std::string s;
  for (const auto& [why, n] : f.refusal_reasons)
    s += (s.empty() ? "; most often: '" : ", '") + why + "' (" + std::to_string(n) + ")";
  return s;
}
}  // namespace

GateVerdict gate_verdict(const RunFacts& f) {
  using S = GateStatus;
  using U = Unexercised;
  if (!f.device_refusal.empty()) return {S::not_exercised, U::device, "refuses this device: " + f.device_refusal};
  if (!f.dtype_refusal.empty()) return {S::not_exercised, U::dtype, f.dtype_refusal};
  if (!f.failure.empty()) return {S::failed, U::none, f.failure};
  if (!f.device_memory.empty())
    return {S::not_exercised, U::memory,
            "the harness could not allocate device memory, not the kernel's failure: " + f.device_memory +
                (f.cases_run > 0 ? "; " + std::to_string(f.cases_run) + " case(s) had held before it, not counted as a pass" : "")};
  if (f.cases_run > 0) return {S::passed, U::none, ""};
  if (f.budget_spent && f.refusals == 0 && f.discarded == 0)
    return {S::not_exercised, U::budget, "the time budget was spent before its first case"};
  if (f.refusals > 0)
    return {S::not_exercised, U::refused,
            "supports() refused every generated problem (" + std::to_string(f.refusals) + " refused" +
                reasons_text(f) + ")" +
                (f.budget_spent ? "; the time budget ended the run" : "")};
  return {S::not_exercised, U::discarded,
          "zero cases ran to the end (" + std::to_string(f.discarded) + " discarded" +
              (f.budget_spent ? "; the time budget ended the run" : "") + ")"};
}

bool fails_gate(const GateVerdict& v, const std::string& property, const Allowance& allowed) {
  if (v.status == GateStatus::failed) return true;
  if (v.status == GateStatus::not_exercised) return !allowed.allows(property);
  return false;
}

}  // namespace flashprobe::gate
