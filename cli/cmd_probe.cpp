// flashprobe probe: derive matrix-instruction register layouts (probes/, engine.h).
//   flashprobe probe --simulate NAME | --simulate --all   the engine on the simulated atom (CI, no GPU)
//   flashprobe probe NAME | --all [--out-dir DIR]         the engine on the real instruction, where
//                                                         this build has an executor for it
// Records say "source": "simulated" or "hardware"; a simulated result is never labelled measured.
//
// Hardware runs (hardware_probe.h): one record per atom, DIR/probe-<ATOM>.json; --json FILE adds a
// summary (every atom's verdict, skips with reasons, timings). Exit codes:
//   0  every probed atom is ok (also --all on a machine without a GPU: nothing to probe, said so);
//   1  some atom failed or its layout does not match / reconcile;
//   2  a named atom cannot be probed here: no GPU, the device's arch lacks it (wgmma below sm_90),
//      or this build has no executor for it; an unknown name or bad option.
// The time printed excludes device initialisation (context creation before the first atom).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "flashprobe/core/buffer.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/hardware_probe.h"
#include "flashprobe/probes/load_path.h"
#include "flashprobe/probes/simulated.h"

namespace flashprobe::cli {
namespace {
using namespace flashprobe::probes;

struct Options {
  std::string name;
  bool all = false, simulate = false, grids = true;
  std::string json, out_dir, replicas = "partial";
};

std::string known_list() {
  std::string s;
  for (auto& n : atom_names()) s += "\n  " + n;
  return s;
}

int run_hardware(const Options& o) {
  // Explicitly, so the vendor executors are linked in and registered before any lookup.
  register_hardware_executors();
  const DeviceQuery q = query_devices();
  if (q.devices.empty()) {
    const std::string msg = q.reason + ": nothing probed on hardware; `flashprobe probe --simulate " +
                            (o.all ? std::string("--all") : o.name) + "` runs the engine on a simulated atom";
    if (!o.all) throw NoDevice("probe " + o.name + ": " + msg);
    std::cout << msg << "\n";
    return 0;
  }
  const DeviceInfo dev = q.devices.front();
  if (!o.out_dir.empty()) std::filesystem::create_directories(o.out_dir);
  const nlohmann::json header = record_header("probe");
  { DeviceBuffer warm(16); }  // creates the context: device initialisation is not part of the timing
  const auto t0 = std::chrono::steady_clock::now();
  std::cout << "probing on " << dev.name << " (" << dev.arch << ", driver " << dev.driver_version << ", runtime "
            << dev.runtime_version << ")\n\n";
  nlohmann::json summary = header, atoms = nlohmann::json::array(), skipped = nlohmann::json::array();
  int probed = 0, not_ok = 0, calls = 0;
  auto handle = [&](AtomRun r) {
    if (r.status == RunStatus::skipped) {
      if (!o.all) {
        if (r.wrong_arch) throw UsageError("probe " + r.atom + " cannot run here: " + r.reason);
        throw NoDevice("probe " + r.atom + ": " + r.reason);
      }
      std::cout << r.atom << "  skipped: " << r.reason << "\n";
      skipped.push_back({{"atom", r.atom}, {"reason", r.reason}, {"wrong_arch", r.wrong_arch}});
      return;
    }
    ++probed;
    calls += r.executor_calls;
    if (!r.ok) ++not_ok;
    std::cout << r.text << "  => " << (r.ok ? "ok" : "NOT OK") << ": " << r.verdict << " (" << r.seconds * 1e3
              << " ms)\n\n";
    if (!o.out_dir.empty())
      write_json_file((std::filesystem::path(o.out_dir) / ("probe-" + r.atom + ".json")).string(), r.record);
    atoms.push_back({{"atom", r.atom}, {"status", status_name(r.status)}, {"ok", r.ok}, {"verdict", r.verdict},
                     {"reason", r.reason}, {"executor_calls", r.executor_calls}, {"seconds", r.seconds}});
  };
  for (const AtomDesc& atom : mma_atoms())
    if (o.all || atom.name == o.name) handle(probe_on_hardware(atom, dev, header, {}, o.grids));
  for (const LoadAtomDesc& atom : load_atoms())
    if (o.all || atom.name == o.name) handle(probe_on_hardware(atom, dev, header, o.grids));
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  summary["source"] = "hardware";
  summary["atoms"] = atoms;
  summary["skipped"] = skipped;
  summary["seconds_after_init"] = total;
  summary["executor_calls"] = calls;
  if (!o.json.empty()) write_json_file(o.json, summary);
  std::cout << probed << " probed on " << dev.name << ", " << not_ok << " not ok, " << skipped.size()
            << " skipped; " << calls << " engine batches; " << total << " s after device initialisation\n";
  return not_ok ? 1 : 0;
}

int run_probe(const Options& o) {
  if (o.name.empty() == !o.all)
    throw UsageError("probe: give one atom NAME or --all (see `flashprobe list atoms`)");
  if (!o.all && !find_mma_atom(o.name) && !find_load_atom(o.name))
    throw UsageError("probe: unknown atom '" + o.name + "'; known atoms:" + known_list());
  if (!o.out_dir.empty() && o.simulate)
    throw UsageError("probe: --out-dir writes hardware records (one per atom); with --simulate use --json FILE");
  // Before any atom is probed: a record that cannot be written is found now, not after the run.
  if (!o.json.empty()) require_writable_file(o.json, "--json");
  if (!o.out_dir.empty()) require_writable_dir(o.out_dir, "--out-dir");
  if (!o.simulate) return run_hardware(o);
  if (o.replicas != "partial" && o.replicas != "poison")
    throw UsageError("probe: --replicas '" + o.replicas + "' is not one of partial, poison");
  const ReplicaRule rule = o.replicas == "poison" ? ReplicaRule::poison : ReplicaRule::partial;
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json rec = record_header("probe");
  rec["source"] = "simulated";
  rec["measured_on_hardware"] = false;
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
    if (!atom.expected) {
      skip(atom.name, "no documented layout to simulate (" + atom.source.text() + "); probe it on hardware");
      continue;
    }
    SimulatedExecutor ex(atom, *atom.expected, rule);
    ProbeResult r = probe(atom, ex);
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
  std::cout << probed << " probed (simulated), " << failed
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
  sub->add_option("--json", o->json, "Write a flashprobe.probe/1 record (hardware: a summary) to this file");
  sub->add_option("--out-dir", o->out_dir, "Hardware: write one record per atom, DIR/probe-<ATOM>.json");
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
                  (a.expected ? "documented" : "none documented") +
                  "  hardware executor: " + (has_hardware_load_executor(a.name) ? "yes" : "no"));
  return out;
});

}  // namespace
}  // namespace flashprobe::cli
