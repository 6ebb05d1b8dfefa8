// libFuzzer target: the probe-record reader, i.e. the layout JSON of a flashprobe.probe/1 record
// (probes/src/layout_io.cpp: an operand's table, or an MMA's A, B and C) that the replay tests and
// the report read. A refusal must be a UsageError; another exception, a crash, a sanitizer report or
// a layout that does not survive its own round trip is a finding.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "flashprobe/core/error.h"
#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/layout.h"

namespace {
template <class L>
void read(const nlohmann::json& j) {
  L l;
  try {
    from_json(j, l);
  } catch (const flashprobe::UsageError&) {
    return;
  }
  const nlohmann::json again = l;
  if (again.get<L>() != l) __builtin_trap();
  if constexpr (std::is_same_v<L, flashprobe::probes::OperandLayout>) {
    if (!flashprobe::probes::diff(l, l, flashprobe::probes::Operand::A).empty()) __builtin_trap();
    (void)flashprobe::probes::formula(l).text();
  } else {
    if (!flashprobe::probes::diff(l, l).empty()) __builtin_trap();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  // A record holds its layout under "layout": an operand (load atoms) or {A, B, C} (mma atoms).
  const nlohmann::json& layout = j.is_object() && j.contains("layout") ? j["layout"] : j;
  read<flashprobe::probes::OperandLayout>(layout);
  read<flashprobe::probes::MmaLayout>(layout);
  return 0;
}
