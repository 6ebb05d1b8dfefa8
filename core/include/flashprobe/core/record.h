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

// Checked before a command's work, so that an output that cannot be written stops it at once instead
// of after minutes of measuring (or after printing PASS). Each throws a UsageError naming the path and
// the option (e.g. "--json") and leaves the file system as it was.
//   require_writable_file: path is not a directory and a file can be created or appended there.
//   require_writable_dir:  path is a directory, or can be created, and a file can be created in it.
void require_writable_file(const std::string& path, const std::string& option);
void require_writable_dir(const std::string& path, const std::string& option);

}  // namespace flashprobe
