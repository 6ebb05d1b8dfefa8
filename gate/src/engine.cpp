#include "flashprobe/gate/engine.h"

#include <rapidcheck.h>

#include <map>
#include <sstream>
#include <unordered_map>

#include "flashprobe/core/error.h"
#include "flashprobe/gate/host_memory.h"
#include "flashprobe/gate/kernel_domain.h"
#include "flashprobe/gate/progress.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/gate/replay.h"
#include "flashprobe/gate/time_ledger.h"

// RapidCheck's reproduce-string codec (exported by the library, not declared in its headers): the
// same strings as RC_PARAMS="reproduce=...".
namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& reproduceMap);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace flashprobe::gate {
namespace {

using Clock = std::chrono::steady_clock;

// What one run counts while RapidCheck drives it.
struct Context {
  std::optional<Case> current, failing;
  bool shrinking = false, budget_spent = false;
  std::string memory;  // the first DeviceMemoryShortage of a case: no case starts after it
  long long discards = 0, budget_discards = 0, refusals = 0;
  std::map<std::string, long long> refusal_reasons;
};
thread_local Context* g_ctx = nullptr;
constexpr const char* kBudgetSpent = "the time budget is spent";  // the discards the budget made
constexpr const char* kMemoryShort = "the harness is short of device memory";  // the discards a shortage made

class Listener final : public rc::detail::TestListener {
 public:
  explicit Listener(Context& c) : c_(c) {}
  void onTestCaseFinished(const rc::detail::CaseDescription& d) override {
    using T = rc::detail::CaseResult::Type;
    if (d.result.type == T::Failure) {
      c_.shrinking = true;  // from here on RapidCheck shrinks: the budget no longer stops it
      c_.failing = c_.current;
      progress_failure();
    } else if (d.result.type == T::Discard) {
      if (d.result.description.find(kMemoryShort) != std::string::npos) return;
      ++(d.result.description.find(kBudgetSpent) != std::string::npos ? c_.budget_discards : c_.discards);
    }
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    if (accepted) c_.failing = c_.current;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

 private:
  Context& c_;
};

const NamedProperty& find_property(const std::vector<NamedProperty>& props, const Subject& s, const std::string& name) {
  for (const auto& p : props)
    if (p.name == name) return p;
  std::string have;
  for (const auto& p : props) have += (have.empty() ? "" : ", ") + p.name;
  throw UsageError("property '" + name + "' does not apply to " + s.display() + "; its properties: " + have);
}

std::unordered_map<std::string, rc::detail::Reproduce> reproduce_map(const std::string& rc) {
  std::unordered_map<std::string, rc::detail::Reproduce> m;
  try {
    m = rc::detail::stringToReproduceMap(rc);
  } catch (const std::exception& e) {
    throw UsageError("--replay: rc='" + rc + "' is not a RapidCheck reproduce string (" + e.what() + ")");
  }
  if (m.size() != 1) throw UsageError("--replay: rc= holds " + std::to_string(m.size()) + " cases; one expected");
  return m;
}

}  // namespace

void check_reproduce(const std::string& rc) { (void)reproduce_map(rc); }

std::string rc_params_reproduce(const std::string& test_id) {
  const auto& all = rc::detail::configuration().reproduce;
  const auto it = all.find(test_id);
  if (it == all.end()) return "";
  return rc::detail::reproduceMapToString({{test_id, it->second}});
}

void note_case(const Case& c) {
  if (g_ctx) g_ctx->current = c;
}

Outcome run_property(const Subject& s, const std::string& property, const RunOptions& o) {
  const std::vector<NamedProperty> props = properties_for(s.family);
  const NamedProperty& prop = find_property(props, s, property);
  Outcome out;
  out.subject = s.kernel.name;
  out.kind = s.kind;
  out.ref = s.ref;
  out.property = property;
  out.seed = o.seed;
  out.cases_asked = o.cases;
  out.replayed = !o.reproduce.empty();
  const auto t0 = Clock::now();
  const auto finish = [&] {
    out.verdict = gate_verdict(out.facts);
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  };

  // Nothing is drawn where the subject cannot run: a built-in kernel of another architecture
  // (asked with its own domain's plainest problem, kernel_domain.h), a property that needs more of
  // the device, a dtype restriction that leaves none of the subject's dtypes.
  if (s.kind == "kernel" && !s.host) out.facts.device_refusal = device_refusal(s.kernel, s.dev);
  if (out.facts.device_refusal.empty()) out.facts.device_refusal = property_device_refusal(property, s);
  if (out.facts.device_refusal.empty() && s.domain.dtypes.empty())
    out.facts.dtype_refusal = "takes no " + (o.dtype.empty() ? std::string("dtype of its domain") : o.dtype + " inputs") +
                              " (--dtype / FLASHPROBE_PROP_DTYPE)";
  if (!out.facts.device_refusal.empty() || !out.facts.dtype_refusal.empty()) {
    finish();
    ledger_skip(out.subject, property, out.verdict.why);
    return out;
  }

  keep_freed_host_memory();  // the cases' oracle vectors reuse the heap instead of fresh pages
  Context ctx;
  Subject run = s;
  const kernels::KernelInfo k = s.kernel;
  const DeviceInfo dev = s.dev;
  const auto inner = s.domain.supports;
  run.domain.supports = [inner, k, dev, &ctx](const AttnProblem& p) {
    if (!inner || inner(p)) return true;
    ++ctx.refusals;
    if (k.supports) ++ctx.refusal_reasons[k.supports(dev, p).reason];
    return false;
  };

  rc::detail::TestMetadata md;
  md.id = o.test_id.empty() ? "gate/" + s.kernel.name + "/" + property : o.test_id;
  md.description = s.kernel.name + "_" + property;
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
  if (!o.reproduce.empty()) {
    reproduce = reproduce_map(o.reproduce);
    md.id = reproduce.begin()->first;
  }
  rc::detail::TestParams params;
  params.seed = o.seed;
  params.maxSuccess = o.cases;
  params.maxSize = o.max_size;
  Listener listener(ctx);

  // What the property holds for its run (its device memory), before its first case: a shortage is
  // the harness's, reported as such (not exercised, cause memory), never the kernel's failure.
  // The wait for it (another gate holding the device's lock) is not taken from the run's share of
  // the time budget: its deadline moves by the wait.
  std::shared_ptr<void> held;
  auto deadline = o.deadline;
  const auto budget_now = [&o] { return o.clock ? o.clock() : Clock::now(); };
  if (prop.hold) {
    const auto h0 = budget_now();
    try {
      held = prop.hold(s);
      if (deadline) *deadline += budget_now() - h0;
    } catch (const DeviceMemoryShortage& e) {
      out.facts.device_memory = e.what();
      finish();
      ledger_skip(out.subject, property, out.verdict.why);
      return out;
    }
  }

  // The cases that run to the end on each of the kernel's paths (its tile classes, decode's plans), for the
  // ledger: the soak fails a kernel x dtype where one of them ran none (scripts/gpu/soak_summary.py).
  const std::vector<KernelPath> paths = s.kind == "kernel" ? kernel_paths(s.kernel, s.dev) : std::vector<KernelPath>{};
  std::vector<long long> on_path(paths.size(), 0);
  g_ctx = &ctx;
  if (o.progress) progress_start(s.kernel.name + "/" + property, o.cases);
  ledger_start(s.kernel.name, property, s.runner);
  const Property body = prop.run;
  const auto result = rc::detail::checkProperty(
      rc::detail::toProperty([&] {
        ctx.current.reset();
        if (deadline && !ctx.shrinking && budget_now() >= *deadline) {
          ctx.budget_spent = true;
          RC_DISCARD(kBudgetSpent);
        }
        // After a shortage no case starts (the device is short; the run is the harness's failure).
        if (!ctx.memory.empty()) RC_DISCARD(kMemoryShort);
        if (o.progress) progress_case();
        ledger_case();
        try {
          body(run);
        } catch (const DeviceMemoryShortage& e) {
          ctx.memory = e.what();
          RC_DISCARD(kMemoryShort);
        }
        if (ctx.current && !ctx.shrinking)
          for (std::size_t i = 0; i < paths.size(); ++i) on_path[i] += paths[i].takes(ctx.current->problem);
      }),
      md, params, listener, reproduce);
  g_ctx = nullptr;
  held.reset();
  if (o.progress) progress_end();

  std::ostringstream msg;
  rc::detail::printResultMessage(result, msg);
  out.message = msg.str();
  RunFacts& f = out.facts;
  f.refusals = ctx.refusals;
  f.refusal_reasons = most_frequent(ctx.refusal_reasons);
  f.discarded = ctx.discards;
  f.budget_spent = ctx.budget_spent;
  f.device_memory = ctx.memory;
  if (result.template is<rc::detail::SuccessResult>()) {
    f.cases_run = result.template get<rc::detail::SuccessResult>().numSuccess;
  } else if (result.template is<rc::detail::FailureResult>()) {
    const auto* r = &result.template get<rc::detail::FailureResult>();
    f.cases_run = r->numSuccess;
    f.failure = r->description.empty() ? out.message : r->description;
    // The last failing case RapidCheck's listener saw (a replay reports none: its one case).
    if (const auto& c = ctx.failing ? ctx.failing : ctx.current) {
      out.counterexample = *c;
      out.case_id = c->id();
    }
    out.reproduce = rc::detail::reproduceMapToString({{md.id, r->reproduce}});
    ReplayLine line{s.kind, s.ref, property, o.dtype, out.reproduce};
    out.replay = replay_command(line);
  } else if (result.template is<rc::detail::GaveUpResult>()) {
    const auto* r = &result.template get<rc::detail::GaveUpResult>();
    f.cases_run = r->numSuccess;
    // Giving up because the budget discarded every case after it is the budget's cut, not a failure.
    // So is giving up after a shortage of device memory (reported as such by the verdict).
    if (!ctx.budget_spent && ctx.memory.empty() && r->numSuccess > 0) f.failure = out.message;
  } else if (out.replayed && result.template get<rc::detail::Error>().description.find("not a failure") != std::string::npos) {
    f.cases_run = 1;  // the replayed case ran and held: the failure did not reproduce
  } else {
    f.failure = out.message.empty() ? std::string("RapidCheck reported an error") : out.message;
  }
  finish();
  std::vector<std::pair<std::string, long long>> per_path;
  for (std::size_t i = 0; i < paths.size(); ++i) per_path.emplace_back(paths[i].name, on_path[i]);
  ledger_paths(per_path);
  ledger_end(gate_status_name(out.verdict.status), f.cases_run, out.verdict.why);
  return out;
}

}  // namespace flashprobe::gate
