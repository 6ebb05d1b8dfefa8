// One atom on real hardware -> one record (hardware_probe.h).
//
// Record fields (besides record_header("probe"): schema, commit, date, host, device with driver and
// runtime versions): "atom", "kind" ("mma" | "load"), "source": "hardware", "arch",
// "driver_version", "runtime_version", "targets", "expected_source", "status" (probed | failed),
// "reason", "ok", "verdict", "layout" (the layout to compare with the declared one: the memory
// layout for atoms with memory paths, else the derived one), "sets" (per operand: ignored slots and
// replica groups, flat lane*slots+slot), "result" (the engine's full result: formulas, checks,
// anomalies, diff), "memory_paths", "reconciliation", "executor_calls", "seconds".
#include "flashprobe/probes/hardware_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "flashprobe/probes/formula.h"

namespace flashprobe::probes {

namespace {
std::map<std::string, MemoryPathsFn, std::less<>>& path_fns() {
  static std::map<std::string, MemoryPathsFn, std::less<>> m;
  return m;
}
std::mutex& path_mutex() {
  static std::mutex m;
  return m;
}

std::string cell(int flat, int slots) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "T%02dV%d", flat / slots, flat % slots);
  return buf;
}

nlohmann::json sets(const OperandLayout& l) {
  return {{"ignored", l.ignored()}, {"replica_groups", l.replica_groups()}};
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json base_record(const nlohmann::json& header, const std::string& atom, const char* kind,
                           const DeviceInfo& dev, const std::vector<std::string>& targets, const Source& src) {
  nlohmann::json j = header;
  j["atom"] = atom;
  j["kind"] = kind;
  j["source"] = "hardware";
  j["arch"] = dev.arch;
  j["driver_version"] = dev.driver_version;
  j["runtime_version"] = dev.runtime_version;
  j["targets"] = targets;
  j["expected_source"] = src.text();
  return j;
}

void fail(AtomRun& r, const std::string& why) {
  r.status = RunStatus::failed;
  r.ok = false;
  r.reason = why;
  r.verdict = "failed";
  r.text = r.atom + "  FAILED: " + why + "\n";
  r.record["status"] = "failed";
  r.record["reason"] = why;
  r.record["ok"] = false;
}
}  // namespace

std::string_view status_name(RunStatus s) {
  switch (s) {
    case RunStatus::probed: return "probed";
    case RunStatus::skipped: return "skipped";
    case RunStatus::failed: return "failed";
  }
  return "?";
}

void register_memory_paths(const std::string& atom_name, MemoryPathsFn fn) {
  std::lock_guard<std::mutex> lock(path_mutex());
  path_fns()[atom_name] = std::move(fn);
}

bool has_memory_paths(std::string_view atom_name) {
  register_hardware_executors();
  std::lock_guard<std::mutex> lock(path_mutex());
  return path_fns().count(atom_name) > 0;
}

namespace {
MemoryPathsFn find_paths(std::string_view atom_name) {
  register_hardware_executors();
  std::lock_guard<std::mutex> lock(path_mutex());
  auto it = path_fns().find(atom_name);
  return it == path_fns().end() ? MemoryPathsFn{} : it->second;
}
}  // namespace

std::optional<MmaLayout> memory_layout(const AtomDesc& atom, const std::vector<OperandPath>& paths) {
  std::optional<OperandLayout> ops[3];
  for (const auto& p : paths) {
    auto& o = ops[static_cast<int>(p.operand)];
    if (!o) o = p.layout;
  }
  if (!ops[0] || !ops[1] || !ops[2]) return std::nullopt;
  MmaLayout m{*ops[0], *ops[1], *ops[2]};
  if (m.a.rows() != atom.m || m.a.cols() != atom.k || m.a.lanes() != atom.wave || m.a.slots() != atom.a_slots ||
      m.b.rows() != atom.k || m.b.cols() != atom.n || m.b.slots() != atom.b_slots || m.c.rows() != atom.m ||
      m.c.cols() != atom.n || m.c.slots() != atom.c_slots)
    return std::nullopt;
  return m;
}

Reconciliation reconcile(const std::vector<OperandPath>& paths, const MmaLayout& memory, const ProbeResult& semantic) {
  Reconciliation r;
  for (const auto& p : paths) {
    const std::string op(operand_name(p.operand));
    for (const auto& a : p.anomalies) r.problems.push_back(op + " via " + p.method + ": " + a);
    const OperandLayout& first = memory.operand(p.operand);
    if (!(p.layout == first)) {
      const auto d = diff(first, p.layout, p.operand);
      r.problems.push_back(op + " via " + p.method + " disagrees with the first path of " + op + " in " +
                           std::to_string(d.size()) + " slots:\n" + format_diff(d, 4));
    }
    if (!p.layout.covers_all()) r.problems.push_back(op + " via " + p.method + ": some element reaches no slot");
  }
  if (!semantic.checks_ok()) r.problems.push_back("the semantic probe's consistency checks failed");
  for (const auto& a : semantic.anomalies) r.problems.push_back("semantic anomaly: " + a);
  if (!semantic.labels_from_expected)
    r.problems.push_back("the semantic layout is not isomorphic to the memory layout (labels stayed canonical)");
  std::size_t bad = 0;
  std::string first_bad;
  for (const auto& d : semantic.diff) {
    const OperandLayout& m = memory.operand(d.op);
    const int flat = m.flat(d.lane, d.slot);
    // A duplicate mma does not read: memory puts an element there that another slot also holds.
    bool duplicate = false;
    if (d.derived.ignored() && !d.expected.ignored()) {
      const auto holders = m.holders()[static_cast<std::size_t>(d.expected.row * m.cols() + d.expected.col)];
      duplicate = holders.size() > 1;
    }
    if (duplicate) {
      r.unread[static_cast<int>(d.op)].push_back(flat);
    } else if (bad++ == 0) {
      first_bad = std::string(operand_name(d.op)) + " " + cell(flat, m.slots()) + ": memory path " +
                  to_string(d.expected) + ", mma " + to_string(d.derived);
    }
  }
  if (bad) r.problems.push_back(std::to_string(bad) + " slots where mma and the memory path disagree; first: " + first_bad);
  for (Operand op : {Operand::A, Operand::B, Operand::C}) {
    const auto& u = r.unread[static_cast<int>(op)];
    if (u.empty()) continue;
    std::string list;
    for (std::size_t i = 0; i < u.size() && i < 8; ++i) list += " " + cell(u[i], memory.operand(op).slots());
    r.notes.push_back(std::string(operand_name(op)) + ": " + std::to_string(u.size()) +
                      " slots are duplicates (memory path) that mma does not read:" + list + (u.size() > 8 ? " ..." : ""));
  }
  r.ok = r.problems.empty();
  return r;
}

bool runs_on(const std::vector<std::string>& targets, const DeviceInfo& dev, std::string& why) {
  std::string list;
  for (const auto& t : targets) {
    list += (list.empty() ? "" : ", ") + t;
    if (dev.vendor == "nvidia" && t.rfind("sm_", 0) == 0) {
      const bool specific = !t.empty() && t.back() == 'a';
      const int n = std::atoi(t.c_str() + 3);
      if (specific ? dev.arch_number == n : dev.arch_number >= n) return true;
    } else if (dev.vendor == "amd" && t == dev.arch) {
      return true;
    }
  }
  why = dev.name + " is " + dev.arch + "; the instruction needs " + list +
        (std::any_of(targets.begin(), targets.end(), [](const std::string& t) { return !t.empty() && t.back() == 'a'; })
             ? " (arch-specific code: that compute capability exactly)"
             : "");
  return false;
}

// The common start of a hardware run: the record's header, then the architecture check (a
// wrong-architecture run comes back with the reason and nothing probed).
template <class Src>
AtomRun start_run(const std::string& name, const char* kind, const std::vector<std::string>& targets, const Src& source,
                  const DeviceInfo& dev, const nlohmann::json& header, std::string& why) {
  AtomRun run;
  run.atom = name;
  run.record = base_record(header, name, kind, dev, targets, source);
  if (!runs_on(targets, dev, why)) {
    run.wrong_arch = true;
    run.reason = why;
  }
  return run;
}

AtomRun probe_on_hardware(const AtomDesc& atom, const DeviceInfo& dev, const nlohmann::json& header,
                          const ProbeOptions& options, bool grids) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string why;
  AtomRun run = start_run(atom.name, "mma", atom.targets, atom.source, dev, header, why);
  if (run.wrong_arch) return run;
  try {
    auto ex = make_hardware_executor(atom, why);
    if (!ex) {
      run.reason = why;
      return run;
    }
    const MemoryPathsFn paths_fn = find_paths(atom.name);
    std::vector<OperandPath> paths;
    std::optional<MmaLayout> mem;
    AtomDesc probed = atom;
    if (paths_fn) {
      paths = paths_fn(atom);
      mem = memory_layout(atom, paths);
      if (!mem) throw std::runtime_error("the memory paths of " + atom.name + " do not give all three operands");
      // Labels from the memory path (reconcile()'s precondition); a documented layout is compared
      // with the memory layout separately below.
      probed.expected = *mem;
      probed.source = {"memory path on this device", "load_matrix_sync / store_matrix_sync"};
    }
    ProbeResult r = probe(probed, *ex, options);
    if (mem && r.labels_from_expected) {
      std::string methods;
      for (const auto& p : paths)
        if (p.operand != Operand::C) methods += (methods.empty() ? "" : "; ") + p.method;
      r.label_anchor = "the memory path (" + methods + ")";
    }
    run.status = RunStatus::probed;
    run.executor_calls = r.executor_calls;
    std::ostringstream text;
    if (mem) text << "(semantic probe labelled by the memory layout: its verdict/diff below compare mma with the memory "
                     "paths; slots listed there that the reconciliation calls duplicates are copies mma does not read)\n";
    text << report(r, grids && !mem);
    nlohmann::json& j = run.record;
    j["status"] = "probed";
    j["result"] = r;
    const MmaLayout& shown = mem ? *mem : r.derived;
    j["layout"] = shown;
    j["sets"] = {{"A", sets(shown.a)}, {"B", sets(shown.b)}, {"C", sets(shown.c)}};
    if (mem) {
      const Reconciliation rec = reconcile(paths, *mem, r);
      nlohmann::json pj = nlohmann::json::array();
      for (const auto& p : paths)
        pj.push_back({{"operand", std::string(operand_name(p.operand))},
                      {"method", p.method},
                      {"agrees", p.layout == mem->operand(p.operand)},
                      {"anomalies", p.anomalies}});
      j["memory_paths"] = pj;
      j["reconciliation"] = {{"ok", rec.ok}, {"problems", rec.problems}, {"notes", rec.notes}};
      const bool documented_ok = !atom.expected || *atom.expected == *mem;
      run.ok = rec.ok && documented_ok;
      run.verdict = std::string(rec.ok ? "reconciled: memory paths and mma agree" : "NOT reconciled: memory paths and mma disagree") +
                    (!atom.expected ? " (no documented layout)" : documented_ok ? "; matches the documented layout"
                                                                                : "; DIFFERS from the documented layout");
      if (atom.expected && !documented_ok) text << "  documented vs memory:\n" << format_diff(diff(*atom.expected, *mem), 8);
      text << "  memory paths: " << paths.size() << " (" << (rec.ok ? "reconciled with mma" : "NOT reconciled") << ")\n";
      for (Operand op : {Operand::A, Operand::B, Operand::C})
        text << "  " << operand_name(op) << " (memory): " << formula(mem->operand(op)).text() << "\n";
      for (const auto& n : rec.notes) text << "  note: " << n << "\n";
      for (const auto& p : rec.problems) text << "  PROBLEM: " << p << "\n";
      if (grids) text << "\n" << grid(*mem) << "\n";
    } else {
      run.ok = r.ok();
      run.verdict = std::string(verdict_name(r.verdict));
    }
    j["ok"] = run.ok;
    j["verdict"] = run.verdict;
    j["executor_calls"] = r.executor_calls;
    run.text = text.str();
  } catch (const std::exception& e) {
    fail(run, e.what());
  }
  run.seconds = since(t0);
  run.record["seconds"] = run.seconds;
  return run;
}

AtomRun probe_on_hardware(const LoadAtomDesc& atom, const DeviceInfo& dev, const nlohmann::json& header, bool grids) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string why;
  AtomRun run = start_run(atom.name, "load", atom.targets, atom.source, dev, header, why);
  if (run.wrong_arch) return run;
  try {
    auto ex = make_hardware_load_executor(atom, why);
    if (!ex) {
      run.reason = why;
      return run;
    }
    LoadProbeResult r = probe_load(atom, *ex);
    run.status = RunStatus::probed;
    run.executor_calls = 1;
    run.ok = r.ok();
    run.verdict = std::string(verdict_name(r.verdict));
    run.text = report(r, grids);
    nlohmann::json& j = run.record;
    j["status"] = "probed";
    j["result"] = r;
    j["layout"] = r.derived;
    j["sets"] = {{"loaded", sets(r.derived)}};
    j["ok"] = run.ok;
    j["verdict"] = run.verdict;
    j["executor_calls"] = 1;
  } catch (const std::exception& e) {
    fail(run, e.what());
  }
  run.seconds = since(t0);
  run.record["seconds"] = run.seconds;
  return run;
}

}  // namespace flashprobe::probes
