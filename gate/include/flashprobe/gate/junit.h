#pragma once
// JUnit XML of a gate run, the form CI systems (GitHub Actions, GitLab, Jenkins) read: one
// <testsuite> per subject, one <testcase> per subject x property. A failed property carries a
// <failure> with the failure message, the shrunk case's JSON and the reproduction line; a property
// not exercised carries a <failure type="not_exercised"> unless the user allowed it, then a
// <skipped> - never a plain pass. Every testcase's <system-out> counts the cases (run, asked,
// discarded, refused) and says when the time budget cut the run short.
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/gate/engine.h"

namespace flashprobe::gate {

// Text safe inside an XML 1.0 element or attribute: &<>"' escaped, control characters other than
// tab, newline and carriage return written as \xNN, invalid UTF-8 bytes as \xNN.
std::string xml_escape(std::string_view s);

std::string junit_xml(const std::vector<Outcome>& outcomes, const Allowance& allowed);
// @throws UsageError naming the file when it cannot be written.
void write_junit(const std::string& path, const std::vector<Outcome>& outcomes, const Allowance& allowed);

}  // namespace flashprobe::gate
