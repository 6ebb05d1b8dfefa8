#include "gate_verdict.h"

namespace flashprobe::proptests {

std::string_view gate_status_name(GateStatus s) {
  switch (s) {
    case GateStatus::passed: return "passed";
    case GateStatus::failed: return "failed";
    case GateStatus::skipped: return "skipped";
  }
  return "?";
}

GateVerdict gate_verdict(const std::string& device_refusal, const std::string& failure, long long cases_run) {
  if (!device_refusal.empty()) return {GateStatus::skipped, "refuses this device: " + device_refusal};
  if (!failure.empty()) return {GateStatus::failed, failure};
  if (cases_run <= 0)
    return {GateStatus::failed, "ran zero cases on a device the kernel runs on: a property that never ran is a failure, not a pass"};
  return {GateStatus::passed, ""};
}

}  // namespace flashprobe::proptests
