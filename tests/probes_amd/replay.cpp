#include "replay.h"

#include <filesystem>
#include <fstream>

#include "flashprobe/core/error.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/simulated.h"

namespace flashprobe::probes::replay {

std::vector<Outcome> replay_probe_record(const nlohmann::json& record) {
  if (record.value("schema", "") != "flashprobe.probe/1")
    throw UsageError("not a flashprobe.probe/1 record (schema '" + record.value("schema", "?") + "')");
  // Two shapes: a run's aggregate ("results": one entry per atom) and the one-atom record that
  // `flashprobe probe --out-dir` writes (the atom's fields at the top). A run summary (--json on
  // hardware: verdicts only, no layouts) has nothing to replay.
  nlohmann::json results = nlohmann::json::array();
  if (record.contains("results")) results = record.at("results");
  else if (record.contains("atom") && record.contains("layout")) results.push_back(record);
  std::vector<Outcome> out;
  for (const auto& res : results) {
    const AtomDesc* atom = find_mma_atom(res.value("atom", ""));
    if (!atom || atom->vendor != Vendor::amd || !res.contains("layout")) continue;
    Outcome o;
    o.atom = atom->name;
    o.recorded_source = res.value("source", record.value("source", "?"));
    o.executor = res.value("executor", "");
    const MmaLayout recorded = res.at("layout").get<MmaLayout>();
    if (recorded.a.lanes() != atom->wave || recorded.a.slots() != atom->a_slots || recorded.c.slots() != atom->c_slots)
      throw UsageError(o.atom + ": the recorded layout's shape does not fit the atom");
    // Poison: a replica the record claims but the replay's inputs break would show as NaN.
    SimulatedExecutor sim(*atom, recorded, ReplicaRule::poison);
    const ProbeResult r = probe(*atom, sim);
    // Labels are deterministic (the document's when isomorphic, else first appearance), so a
    // consistent record comes back unchanged.
    o.reproduces = r.checks_ok() && r.anomalies.empty() && r.derived == recorded;
    o.verdict = r.verdict;
    if (atom->expected && r.labels_from_expected) {
      const auto d = diff(*atom->expected, recorded);
      if (!d.empty()) o.diff = format_diff(d);
    }
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<std::string> hardware_probe_records(const std::string& dir) {
  std::vector<std::string> paths;
  if (!std::filesystem::exists(dir)) return paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("schema", "") == "flashprobe.probe/1" && j.value("source", "") == "hardware")
      paths.push_back(e.path().string());
  }
  return paths;
}

}  // namespace flashprobe::probes::replay
