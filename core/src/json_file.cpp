// Reading and writing JSON files (declared in record.h): apart from record.cpp, whose headers need
// the build and device information, so that the readers can be built on their own (tests/fuzz).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

void require_writable_file(const std::string& path, const std::string& option) {
  struct stat st{};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode)) throw UsageError(path + ": is a directory; " + option + " needs a file path");
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) throw UsageError(path + ": cannot write (" + option + "): " + std::strerror(errno));
  std::fclose(f);
  if (!existed) std::remove(path.c_str());
}

void require_writable_dir(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  // The nearest part of the path that exists must be a directory this process may write into; the
  // parts that do not exist yet are created by the command later (nothing is created here).
  fs::path p = fs::absolute(fs::path(path)).lexically_normal();
  if (p.has_filename() == false && p.has_parent_path()) p = p.parent_path();  // "dir/" -> "dir"
  for (;;) {
    struct stat st{};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        throw UsageError(path + ": " + p.string() + " is not a directory; " + option + " needs a directory path");
      if (::access(p.c_str(), W_OK | X_OK) != 0)
        throw UsageError(path + ": cannot write into " + p.string() + " (" + option + "): " + std::strerror(errno));
      return;
    }
    if (errno != ENOENT || !p.has_parent_path() || p.parent_path() == p)
      throw UsageError(path + ": cannot use as a directory (" + option + "): " + std::strerror(errno));
    p = p.parent_path();
  }
}

}  // namespace flashprobe
