#pragma once
// The verdict of one kernel x property run of the gate (test_kernel_props), as a pure function so
// that the rule is CPU-tested: a skip is only ever a device refusal, and a kernel that runs on the
// device but ran zero cases of a property failed (a property that never ran proves nothing).
#include <string>
#include <string_view>

namespace flashprobe::proptests {

enum class GateStatus { passed, failed, skipped };
std::string_view gate_status_name(GateStatus s);  // "passed", "failed", "skipped"

struct GateVerdict {
  GateStatus status = GateStatus::failed;
  std::string why;  // the device refusal, the failure, or "" when passed
};

// device_refusal: device_refusal()'s answer for the kernel (empty: it runs here); failure: the
// property's failure message (empty when no case failed); cases_run: cases that ran to the end
// (RapidCheck's successes, discarded cases not counted).
GateVerdict gate_verdict(const std::string& device_refusal, const std::string& failure, long long cases_run);

}  // namespace flashprobe::proptests
