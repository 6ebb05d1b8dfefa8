// libFuzzer target: the problem JSON reader (core/src/problem_json.cpp) and the validation the CLI
// runs next (require_valid), on arbitrary bytes. A refusal must be a UsageError; another exception,
// a crash, a sanitizer report or a problem that does not survive its own round trip is a finding.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flashprobe;
  const auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // not JSON: read_json_file's error, not the problem reader's
  AttnProblem p;
  try {
    from_json(j, p);
  } catch (const UsageError&) {
    return 0;
  }
  const nlohmann::json again = p;  // what the writer makes of it reads back as the same problem
  if (again.get<AttnProblem>() != p) __builtin_trap();
  try {
    require_valid(p);
  } catch (const UsageError&) {
    return 0;
  }
  (void)p.id();
  if (p.q_span() < 0 || p.k_span() < 0 || p.v_span() < 0 || p.o_span() < 0) __builtin_trap();
  std::int64_t lo, hi;
  p.visible_range(p.batch - 1, p.sq - 1, lo, hi);  // the last row: the largest offsets
  return 0;
}
