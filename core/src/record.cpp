#include "flashprobe/core/record.h"

#include <unistd.h>

#include <chrono>
#include <ctime>

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

}  // namespace flashprobe
