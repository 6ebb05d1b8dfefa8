#include "flashprobe/gate/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace flashprobe::gate {
namespace {
struct State {
  std::string what;
  int budget = 0, cases = 0, failures = 0;
  std::chrono::steady_clock::time_point last;
  bool tty = isatty(2);
} s;
void show(bool force) {
  if (!s.tty) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - s.last < std::chrono::seconds(1)) return;
  s.last = now;
  std::fprintf(stderr, "\r%s: %d/%d cases (incl. shrinking), %d failure(s)   ", s.what.c_str(), s.cases, s.budget, s.failures);
  std::fflush(stderr);
}
}  // namespace
void progress_start(const std::string& what, int budget) { s = State{what, budget, 0, 0, std::chrono::steady_clock::now(), isatty(2) != 0}; }
void progress_case() { ++s.cases; show(false); }
void progress_failure() { ++s.failures; }
void progress_end() {
  show(true);
  if (s.tty) std::fprintf(stderr, "\n");
}
}  // namespace flashprobe::gate
