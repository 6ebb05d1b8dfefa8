// Reading and writing JSON files (declared in record.h): apart from record.cpp, whose headers need
// the build and device information, so that the readers can be built on their own (tests/fuzz).
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"

namespace flashprobe {

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
