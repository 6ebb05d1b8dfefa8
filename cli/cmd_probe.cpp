// flashprobe probe: derive matrix-instruction register layouts (probes/, engine.h).
//   flashprobe probe --simulate NAME | --simulate --all   the engine on the simulated atom (CI, no GPU)
//   flashprobe probe NAME | --all                         the engine on the real instruction, where
//                                                         this build has an executor for it
// Records say "source": "simulated" or "hardware"; a simulated result is never labelled measured.
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/load_path.h"
#include "flashprobe/probes/simulated.h"

namespace flashprobe::cli {
namespace {
using namespace flashprobe::probes;

struct Options {
  std::string name;
  bool all = false, simulate = false, grids = true;
  std::string json, replicas = "partial";
};

std::string known_list() {
  std::string s;
  for (auto& n : atom_names()) s += "\n  " + n;
  return s;
}

int run_probe(const Options& o) {
  if (o.name.empty() == !o.all)
    throw UsageError("probe: give one atom NAME or --all (see `flashprobe list atoms`)");
  if (!o.all && !find_mma_atom(o.name) && !find_load_atom(o.name))
    throw UsageError("probe: unknown atom '" + o.name + "'; known atoms:" + known_list());
  if (o.replicas != "partial" && o.replicas != "poison")
    throw UsageError("probe: --replicas '" + o.replicas + "' is not one of partial, poison");
  const ReplicaRule rule = o.replicas == "poison" ? ReplicaRule::poison : ReplicaRule::partial;
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json rec = record_header("probe");
  rec["source"] = o.simulate ? "simulated" : "hardware";
  rec["measured_on_hardware"] = false;  // set below only if a hardware executor ran
  nlohmann::json results = nlohmann::json::array(), skipped = nlohmann::json::array();
  int failed = 0, probed = 0;
  std::string single_skip;
  auto skip = [&](const std::string& name, const std::string& why) {
    skipped.push_back({{"atom", name}, {"reason", why}});
    std::cout << name << "  skipped: " << why << "\n";
    if (!o.all) single_skip = why;
  };

  for (const AtomDesc& atom : mma_atoms()) {
    if (!o.all && atom.name != o.name) continue;
    std::unique_ptr<Executor> ex;
    if (o.simulate) {
      if (!atom.expected) {
        skip(atom.name, "no documented layout to simulate (" + atom.source.text() + "); probe it on hardware");
        continue;
      }
      ex = std::make_unique<SimulatedExecutor>(atom, *atom.expected, rule);
    } else {
      std::string why;
      ex = make_hardware_executor(atom, why);
      if (!ex) {
        skip(atom.name, why + " (backend " + rec.value("backend", "?") + "); `--simulate` runs it on the CPU");
        continue;
      }
      rec["measured_on_hardware"] = true;
    }
    ProbeResult r = probe(atom, *ex);
    ++probed;
    if (!r.ok()) ++failed;
    std::cout << report(r, o.grids) << "\n";
    nlohmann::json j = r;
    j["expected_source"] = atom.source.text();
    j["targets"] = atom.targets;
    j["shape"] = {{"m", atom.m}, {"n", atom.n}, {"k", atom.k}, {"wave", atom.wave}};
    results.push_back(std::move(j));
  }
  for (const LoadAtomDesc& atom : load_atoms()) {
    if (!o.all && atom.name != o.name) continue;
    if (!o.simulate) {
      skip(atom.name, "this build has no hardware load-path executor for " + atom.name +
                          "; `--simulate` runs it on the CPU");
      continue;
    }
    if (!atom.expected) {
      skip(atom.name, "no documented layout to simulate");
      continue;
    }
    SimulatedLoader loader(*atom.expected);
    LoadProbeResult r = probe_load(atom, loader);
    ++probed;
    if (!r.ok()) ++failed;
    std::cout << report(r, o.grids) << "\n";
    nlohmann::json j = r;
    j["expected_source"] = atom.source.text();
    results.push_back(std::move(j));
  }
  rec["results"] = results;
  rec["skipped"] = skipped;
  rec["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.json.empty()) write_json_file(o.json, rec);
  std::cout << probed << " probed (" << (o.simulate ? "simulated" : "hardware") << "), " << failed
            << " not ok, " << skipped.size() << " skipped\n";
  if (!single_skip.empty()) throw NoDevice("probe " + o.name + ": " + single_skip);
  return failed ? 1 : 0;
}

CommandRegistration reg("probe", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("probe", "Derive matrix-instruction register layouts (semantic and load-path probes)");
  auto o = std::make_shared<Options>();
  sub->add_option("name", o->name, "Atom name (see `flashprobe list atoms`)");
  sub->add_flag("--all", o->all, "Every atom");
  sub->add_flag("--simulate", o->simulate, "Run on a simulated atom built from the expected layout (no GPU)");
  sub->add_option("--json", o->json, "Write a flashprobe.probe/1 record to this file");
  sub->add_option("--replicas", o->replicas, "Simulated replica rule: partial (default) or poison");
  sub->add_flag("!--no-grids", o->grids, "Do not print the layout grids");
  return [o] { return run_probe(*o); };
});

ListSectionRegistration atoms_section("atoms", [] {
  std::vector<std::string> out;
  for (const AtomDesc& a : mma_atoms()) {
    std::string t;
    for (auto& x : a.targets) t += (t.empty() ? "" : ",") + x;
    out.push_back(a.name + "  mma " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k) +
                  " wave" + std::to_string(a.wave) + " " + std::string(vendor_name(a.vendor)) + " [" + t +
                  "]  layout: " + (a.expected ? "documented" : "none documented") +
                  "  hardware executor: " + (has_hardware_executor(a.name) ? "yes" : "no"));
  }
  for (const LoadAtomDesc& a : load_atoms())
    out.push_back(a.name + "  load " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " wave" +
                  std::to_string(a.wave) + " " + std::string(vendor_name(a.vendor)) + "  layout: " +
                  (a.expected ? "documented" : "none documented") + "  hardware executor: no");
  return out;
});

}  // namespace
}  // namespace flashprobe::cli
