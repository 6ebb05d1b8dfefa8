#pragma once
// Runs the flashprobe executable as a user would and captures its exit code and output (stdout and
// stderr together). The executable is the one built beside the test (FLASHPROBE_EXE, a compile
// definition), or $FLASHPROBE_EXE when set: a GPU machine runs carried copies elsewhere.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace flashprobe::testing {

struct CliResult {
  int code;
  std::string out;
};

inline std::string flashprobe_exe() {
  const char* e = std::getenv("FLASHPROBE_EXE");
  return e && *e ? e : FLASHPROBE_EXE;
}

inline CliResult run_cli(const std::string& args) {
  const std::string cmd = flashprobe_exe() + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  const int status = pclose(p.release());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace flashprobe::testing
