#pragma once
// Progress of long property runs on a terminal: "mma/AgreesWithOracle: 1234 cases, 0 failures", at
// most once a second, on stderr, only when stderr is a terminal (CI logs stay clean).
#include <string>

namespace flashprobe::gate {
void progress_start(const std::string& what, int budget);
void progress_case();
void progress_failure();
void progress_end();
}  // namespace flashprobe::gate
