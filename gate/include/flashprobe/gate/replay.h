#pragma once
// The reproduction line of a shrunk failure: one argument for `flashprobe gate --replay`, naming the
// subject, the property, the dtype restriction and RapidCheck's reproduce string (the random state,
// size and shrink path that regenerate exactly the shrunk case). Values are percent-encoded where
// they hold a space, a quote, '%' or a control character, so the line survives single quotes.
//
// Example:
//   kernel=mma property=AgreesWithOracle dtype=f16 rc=Y29... ->
//   flashprobe gate --replay 'kernel=mma property=AgreesWithOracle dtype=f16 rc=Y29...'
#include <string>

namespace flashprobe::gate {

struct ReplayLine {
  std::string kind;       // "kernel", "plugin" (or a test's "host")
  std::string ref;        // the kernel's name or the plug-in's path
  std::string property;
  std::string dtype;      // "" when every dtype of the subject was drawn
  std::string reproduce;  // RapidCheck's reproduce string
  bool operator==(const ReplayLine&) const = default;
};

std::string format_replay(const ReplayLine& r);
// @throws UsageError naming the part of the line that is missing or malformed and the form expected.
ReplayLine parse_replay(const std::string& line);
// The complete command: flashprobe gate --replay '<format_replay(r)>'.
std::string replay_command(const ReplayLine& r);

}  // namespace flashprobe::gate
