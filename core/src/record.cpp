#include "flashprobe/core/record.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
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
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw UsageError(path + ": is a directory, not a JSON file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError(path + ": cannot open: " + std::strerror(errno));
  // Bounded, so that a device or an endless pipe ends with an error (records are a few MB at most).
  constexpr std::size_t kMax = std::size_t{1} << 28;
  std::string text;
  char buf[1 << 16];
  while (text.size() <= kMax && f.read(buf, sizeof buf).gcount() > 0) text.append(buf, static_cast<std::size_t>(f.gcount()));
  if (text.size() > kMax) throw UsageError(path + ": more than 256 MiB, too large for a JSON record or problem");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace flashprobe
