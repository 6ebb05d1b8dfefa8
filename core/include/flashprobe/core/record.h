#pragma once
// Records, not logs: every result flashprobe writes (probe maps, checks, property runs, benchmarks,
// resource usage) is a JSON object with a fixed header naming where and when it was made:
//   {"schema": "flashprobe.<kind>/1", "tool_version", "commit", "backend", "date", "host",
//    "device": {...} or null, ...payload}
// reports/ reads only records.
#include <string>

#include <nlohmann/json.hpp>

namespace flashprobe {

// The common header for a record of `kind` (e.g. "probe", "check", "bench"); device is filled in
// when a GPU is present, else null.
nlohmann::json record_header(const std::string& kind, bool with_device = true);
std::string utc_now_iso8601();
void write_json_file(const std::string& path, const nlohmann::json& j);
nlohmann::json read_json_file(const std::string& path);  // UsageError naming the file on failure

}  // namespace flashprobe
