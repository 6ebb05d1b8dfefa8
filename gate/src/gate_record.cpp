#include "flashprobe/gate/gate_record.h"

#include "flashprobe/core/record.h"

namespace flashprobe::gate {

nlohmann::json gate_record(const std::vector<Outcome>& outcomes, const Allowance& allowed, const GateRunInfo& info) {
  nlohmann::json rec = record_header("gate");
  rec["evidence"] = info.evidence;
  rec["options"] = {{"cases", info.cases}, {"max_size", info.max_size}, {"seed", info.seed},
                    {"dtype", info.dtype.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.dtype)},
                    {"time_budget_s", info.time_budget_s ? nlohmann::json(*info.time_budget_s) : nlohmann::json(nullptr)},
                    {"allow_not_exercised", allowed.all ? nlohmann::json("all") : nlohmann::json(allowed.properties)}};
  if (!info.replay.empty()) rec["replay"] = info.replay;
  rec["budget_spent"] = info.budget_spent;
  nlohmann::json rows = nlohmann::json::array();
  long run = 0, nx = 0, nx_allowed = 0, failed = 0, memory = 0;
  for (const auto& o : outcomes) {
    const bool fails = fails_gate(o.verdict, o.property, allowed);
    const bool not_ex = o.verdict.status == GateStatus::not_exercised;
    nlohmann::json r = {{"subject", o.subject}, {"kind", o.kind}, {"ref", o.ref}, {"property", o.property},
                        {"status", std::string(gate_status_name(o.verdict.status))}, {"fails_gate", fails},
                        {"cases_run", o.facts.cases_run}, {"cases_asked", o.cases_asked}, {"discarded", o.facts.discarded},
                        {"refused", o.facts.refusals}, {"budget_cut", o.facts.budget_spent}, {"seconds", o.seconds},
                        {"seed", o.seed}, {"reason", o.verdict.why.substr(0, 2000)}};
    if (not_ex) {
      r["cause"] = std::string(unexercised_name(o.verdict.cause));
      r["allowed"] = !fails;
    }
    if (!o.counterexample.is_null()) r["counterexample"] = o.counterexample;
    if (!o.replay.empty()) r["replay"] = o.replay;
    if (o.replayed) r["replayed"] = true;
    rows.push_back(std::move(r));
    if (not_ex) {
      ++nx;
      nx_allowed += !fails;
      memory += o.verdict.cause == Unexercised::memory;
    } else {
      ++run;
    }
    failed += fails;
  }
  rec["rows"] = std::move(rows);
  rec["totals"] = {{"run", run}, {"not_exercised", nx}, {"not_exercised_allowed", nx_allowed}, {"failed", failed},
                     {"device_memory", memory}};
  return rec;
}

}  // namespace flashprobe::gate
