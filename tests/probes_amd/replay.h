#pragma once
// Replaying probe records on the CPU: the layout a probe derived (on an AMD GPU, by someone who
// owns one) becomes a simulated atom, the engine probes that again, and the outcome says
//   - whether the engine reproduces the recorded layout from it (the record is self-consistent), and
//   - how the recorded layout compares with the documented one (matches / differs, with the diff).
// A hardware record that differs from the document is the point of the exercise: it means the
// expected layout in probes/src/expected_*.cpp must change, citing the record.
//
//   for (auto& o : replay_probe_record(read_json_file(path))) EXPECT_TRUE(o.reproduces) << o.atom;
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashprobe/probes/engine.h"

namespace flashprobe::probes::replay {

struct Outcome {
  std::string atom;
  std::string recorded_source;  // "hardware" or "simulated", as the record says
  std::string executor;         // the record's executor description (names the GPU)
  bool reproduces = false;      // the engine derives the recorded layout again from it
  Verdict verdict = Verdict::no_expected;  // recorded layout vs the documented one
  std::string diff;             // format_diff of recorded vs documented, when they differ
};

// Every AMD atom result of a flashprobe.probe/1 record. Throws UsageError for a record that is not
// one, or whose layout does not fit the atom.
std::vector<Outcome> replay_probe_record(const nlohmann::json& record);

// The flashprobe.probe/1 records under `dir` (recursively) whose source is "hardware".
std::vector<std::string> hardware_probe_records(const std::string& dir);

}  // namespace flashprobe::probes::replay
