#include "flashprobe/gate/command.h"

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <sstream>

#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/gate_record.h"
#include "flashprobe/gate/junit.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/gate/replay.h"
#include "flashprobe/gate/time_ledger.h"
#include "flashprobe/kernels/variants.h"

namespace flashprobe::gate {
namespace {

std::string num(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void check_property_name(const std::string& option, const std::string& name, bool all_ok) {
  const auto names = all_property_names();
  if ((all_ok && name == "all") || std::find(names.begin(), names.end(), name) != names.end()) return;
  throw UsageError(option + " " + name + ": not a property; allowed: " + joined(names) + (all_ok ? ", or all" : ""));
}

void check_output(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw UsageError(option + " " + path + ": the folder " + parent.string() + " does not exist");
}

std::string family_of(const SubjectRef& r) {
  return r.kind == "kernel" ? r.ref.substr(0, r.ref.find('/')) : r.kind;
}

std::vector<SubjectRef> refs_of(const GateArgs& a) {
  std::vector<SubjectRef> v;
  for (const auto& k : a.kernels) v.push_back({"kernel", k});
  for (const auto& p : a.plugins) v.push_back({"plugin", p});
  for (const auto& h : a.hosts) v.push_back({"host", h});
  return v;
}

// The properties each subject runs: the named ones that apply to it, or all that apply.
std::vector<std::vector<std::string>> plan(const GateArgs& a, const std::vector<SubjectRef>& refs) {
  std::vector<std::vector<std::string>> out;
  std::set<std::string> used;
  for (const auto& r : refs) {
    std::vector<std::string> names;
    for (const auto& p : properties_for(family_of(r)))
      if (a.properties.empty() || std::find(a.properties.begin(), a.properties.end(), p.name) != a.properties.end()) {
        names.push_back(p.name);
        used.insert(p.name);
      }
    out.push_back(names);
  }
  for (const auto& p : a.properties)
    if (!used.count(p)) throw UsageError("--property " + p + " applies to none of the subjects (SplitsAgree is decode's; every other kernel and plug-in has DecodeLastRowEqualsPrefill)");
  return out;
}

std::string status_word(const Outcome& o, const Allowance& allowed) {
  switch (o.verdict.status) {
    case GateStatus::passed: return "passed";
    case GateStatus::failed: return "FAILED";
    case GateStatus::not_exercised: {
      const std::string what = o.verdict.cause == Unexercised::memory ? "NOT RUN, the harness is short of device memory" : "NOT EXERCISED";
      return fails_gate(o.verdict, o.property, allowed) ? what + " (not allowed)" : "not exercised (allowed)";
    }
  }
  return "?";
}

void print_outcome(std::ostream& out, const Outcome& o, const Allowance& allowed) {
  out << o.subject << " / " << o.property << ": " << status_word(o, allowed) << ", " << o.facts.cases_run << " of " << o.cases_asked
      << " cases run (" << o.facts.discarded << " discarded, " << o.facts.refusals << " problems refused by supports())"
      << (o.facts.budget_spent ? ", cut short by the time budget" : "") << ", " << std::fixed << std::setprecision(2) << o.seconds
      << " s" << std::defaultfloat << "\n";
  if (o.verdict.status != GateStatus::passed) out << "  " << o.verdict.why << "\n";
  if (!o.counterexample.is_null()) out << "  shrunk case: " << o.counterexample.dump() << "\n";
  if (!o.replay.empty()) out << "  reproduce: " << o.replay << "\n";
  out.flush();
}

// run / not exercised / failed per subject and in total; true when the gate holds.
bool print_summary(std::ostream& out, const std::vector<Outcome>& outs, const Allowance& allowed) {
  struct Count {
    long run = 0, nx = 0, nx_allowed = 0, failed = 0, memory = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Count> per;
  Count all;
  for (const auto& o : outs) {
    const std::string key = o.kind == "kernel" ? o.subject : o.kind + " " + o.subject;
    if (!per.count(key)) order.push_back(key);
    for (Count* c : {&per[key], &all}) {
      const bool f = fails_gate(o.verdict, o.property, allowed);
      if (o.verdict.status == GateStatus::not_exercised) {
        ++c->nx;
        c->nx_allowed += !f;
        c->memory += o.verdict.cause == Unexercised::memory;
      } else {
        ++c->run;
      }
      c->failed += f;
    }
  }
  const auto line = [](const Count& c) {
    return std::to_string(c.run) + " run, " + std::to_string(c.nx) + " not exercised (" + std::to_string(c.nx_allowed) +
           " allowed" + (c.memory ? ", " + std::to_string(c.memory) + " for lack of device memory" : "") + "), " +
           std::to_string(c.failed) + " failed";
  };
  out << "summary (subject x property: run / not exercised / failed):\n";
  for (const auto& k : order) out << "  " << k << ": " << line(per[k]) << "\n";
  const bool holds = all.failed == 0 && all.run > 0;
  out << "gate: " << outs.size() << " subject x property: " << line(all) << " -> " << (holds ? "PASSED" : "FAILED")
      << (all.run == 0 ? " (nothing was exercised: a gate that checked nothing does not pass)" : "") << "\n";
  return holds;
}

void write_outputs(const GateArgs& a, const std::vector<Outcome>& outs, const Allowance& allowed, const GateRunInfo& info) {
  if (!a.junit.empty()) write_junit(a.junit, outs, allowed);
  if (!a.json.empty()) {
    try {
      write_json_file(a.json, gate_record(outs, allowed, info));
    } catch (const std::exception& e) {
      throw UsageError("--json " + a.json + ": " + e.what());
    }
  }
}

}  // namespace

Resolver device_resolver() {
  return [](const SubjectRef& r, const std::string& dtype) -> Subject {
    if (r.kind == "kernel") {
      const kernels::KernelInfo k = kernels::kernel_or_variant(r.ref);  // names checked before the device
      return builtin_subject(r.ref, require_device(), dtype);
    }
    if (r.kind == "plugin") {
      const std::string path = std::filesystem::absolute(r.ref).string();
      const Plugin pl = Plugin::load(path);
      return plugin_subject(pl, require_device(), path, dtype);
    }
    throw UsageError("subject kind '" + r.kind + "': flashprobe gate takes kernel=NAME or plugin=PATH");
  };
}

void validate(const GateArgs& a) {
  if (a.cases < 1) throw UsageError("--cases " + std::to_string(a.cases) + ": at least 1 case per property");
  if (a.max_size < 1) throw UsageError("--max-size " + std::to_string(a.max_size) + ": at least 1 (100 is the domains' full size)");
  if (!a.dtype.empty() && !parse_dtype(a.dtype)) throw UsageError("--dtype " + a.dtype + ": not a dtype; allowed: f16, bf16, f32");
  if (a.time_budget_s && !(std::isfinite(*a.time_budget_s) && *a.time_budget_s > 0))
    throw UsageError("--time-budget " + num(*a.time_budget_s) + ": a positive number of seconds");
  for (const auto& p : a.properties) check_property_name("--property", p, false);
  for (const auto& p : a.allow_not_exercised) check_property_name("--allow-not-exercised", p, true);
  check_output("--junit", a.junit);
  check_output("--json", a.json);
  if (!a.replay.empty()) {
    if (!a.kernels.empty() || !a.plugins.empty() || !a.hosts.empty() || !a.properties.empty() || !a.dtype.empty())
      throw UsageError("--replay takes the subject, the property and the dtype from its line; drop --kernel, --plugin, --property and --dtype");
    const ReplayLine r = parse_replay(a.replay);
    check_property_name("--replay property=", r.property, false);
    if (!r.dtype.empty() && !parse_dtype(r.dtype)) throw UsageError("--replay dtype=" + r.dtype + ": not a dtype; allowed: f16, bf16, f32");
    check_reproduce(r.reproduce);
    return;
  }
  if (a.kernels.empty() && a.plugins.empty() && a.hosts.empty())
    throw UsageError("no subject: name one or more with --kernel NAME (this build: " + kernels::kernel_names() + ") or --plugin PATH");
  for (const auto& k : a.kernels) (void)kernels::kernel_or_variant(k);
  for (const auto& p : a.plugins)
    if (!std::filesystem::is_regular_file(p)) throw UsageError("--plugin " + p + ": no such file (a shared library exporting flashprobe_plugin_v1)");
  (void)plan(a, refs_of(a));
}

int run_gate(const GateArgs& a, const Resolver& resolve, std::ostream& out) {
  validate(a);
  ledger_keep_record(false);  // the command's record is --json (time_ledger.h)
  Allowance allowed;
  for (const auto& p : a.allow_not_exercised) {
    if (p == "all") allowed.all = true;
    else allowed.properties.insert(p);
  }
  GateRunInfo info;
  info.cases = a.cases;
  info.max_size = a.max_size;
  info.seed = a.seed ? *a.seed : std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  info.dtype = a.dtype;
  info.time_budget_s = a.time_budget_s;
  RunOptions o;
  o.cases = a.cases;
  o.max_size = a.max_size;
  o.seed = info.seed;
  o.dtype = a.dtype;
  o.progress = a.progress;
  std::vector<Outcome> outs;
  bool all_host = true;

  if (!a.replay.empty()) {
    const ReplayLine r = parse_replay(a.replay);
    const Subject s = resolve({r.kind, r.ref}, r.dtype);
    all_host = s.host;
    o.reproduce = r.reproduce;
    o.dtype = r.dtype;
    info.dtype = r.dtype;
    info.replay = a.replay;
    out << "replaying " << s.display() << " / " << r.property << " (one shrunk case)\n";
    outs.push_back(run_property(s, r.property, o));
    print_outcome(out, outs.back(), allowed);
    const Outcome& x = outs.back();
    if (x.verdict.status == GateStatus::passed)
      out << "the case holds now: the failure did not reproduce\n";
    info.evidence = all_host ? "simulated" : "measured";
    write_outputs(a, outs, allowed, info);
    return x.verdict.status == GateStatus::passed ? 0 : 1;
  }

  const std::vector<SubjectRef> refs = refs_of(a);
  const auto names = plan(a, refs);
  std::vector<Subject> subjects;
  for (const auto& r : refs) subjects.push_back(resolve(r, a.dtype));
  const auto budget_now = [&a] { return a.clock ? a.clock() : std::chrono::steady_clock::now(); };
  o.clock = a.clock;
  const auto start = budget_now();
  const auto end =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(a.time_budget_s.value_or(0)));
  std::size_t left = 0;  // subject x property runs still to start
  for (const auto& n : names) left += n.size();
  out << "flashprobe gate: " << refs.size() << " subject(s), " << a.cases << " cases per property, max size " << a.max_size
      << ", seed " << info.seed << (a.dtype.empty() ? "" : ", dtype " + a.dtype)
      << (a.time_budget_s ? ", time budget " + num(*a.time_budget_s) + " s" : "") << "\n";
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    all_host = all_host && subjects[i].host;
    for (const auto& p : names[i]) {
      // Each run gets an equal share of what is left of the budget (what one leaves unused goes to
      // the next), so that a slow property cannot starve the ones after it of every case.
      if (a.time_budget_s) {
        const auto now = budget_now();
        o.deadline = now + (end > now ? (end - now) / static_cast<long>(left) : std::chrono::steady_clock::duration::zero());
      }
      --left;
      outs.push_back(run_property(subjects[i], p, o));
      print_outcome(out, outs.back(), allowed);
      info.budget_spent = info.budget_spent || outs.back().facts.budget_spent;
    }
  }
  if (info.budget_spent) {
    long cut = 0, none = 0;
    for (const auto& x : outs)
      if (x.facts.budget_spent) (x.facts.cases_run > 0 ? cut : none) += 1;
    out << "time budget of " << *a.time_budget_s << " s spent: " << cut << " propert" << (cut == 1 ? "y" : "ies")
        << " cut short, " << none << " with no case run (not exercised)\n";
  }
  info.evidence = all_host ? "simulated" : "measured";
  const bool holds = print_summary(out, outs, allowed);
  write_outputs(a, outs, allowed, info);
  return holds ? 0 : 1;
}

}  // namespace flashprobe::gate
