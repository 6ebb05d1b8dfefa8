#include "flashprobe/core/record.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>

#include "flashprobe/core/build_info.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"

namespace flashprobe {

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json record_header(const std::string& kind, bool with_device) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  nlohmann::json j{{"schema", "flashprobe." + kind + "/1"},
                   {"tool_version", version()},
                   {"commit", commit()},
                   {"backend", backend()},
                   {"date", utc_now_iso8601()},
                   {"host", host},
                   {"device", nullptr}};
  if (with_device) {
    auto q = query_devices();
    if (!q.devices.empty()) j["device"] = q.devices.front();
    else j["device_reason"] = q.reason;
  }
  return j;
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  std::ofstream f(path);
  if (!f) throw UsageError(path + ": cannot write");
  f << j.dump(1) << "\n";
  if (!f) throw UsageError(path + ": write failed");
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UsageError(path + ": cannot open");
  try {
    return nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace flashprobe
