#pragma once
// The gate's record (schema flashprobe.gate/1, what `flashprobe gate --json` writes and the report
// reads: reports/fpreport/checks.py, reader "gate"): the record header (device, commit, date), the
// run's options, and one row per subject x property:
//   {"subject", "kind", "ref", "property", "status": passed|failed|not_exercised, "cause" (why
//    nothing ran: device, dtype, refused, discarded, budget), "allowed" (a not-exercised property
//    the user allowed), "fails_gate", "cases_run", "cases_asked", "discarded", "refused",
//    "budget_cut", "seconds", "seed", "reason", "counterexample" (the shrunk case), "replay"}
// and "totals": {"run", "not_exercised", "not_exercised_allowed", "failed"}.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashprobe/gate/engine.h"

namespace flashprobe::gate {

struct GateRunInfo {
  int cases = 0, max_size = 0;
  std::uint64_t seed = 0;
  std::string dtype;
  std::optional<double> time_budget_s;
  bool budget_spent = false;
  std::string replay;  // the --replay line of a replay run
  std::string evidence = "measured";  // docs/evidence.md: "simulated" for a host stand-in's run
};

nlohmann::json gate_record(const std::vector<Outcome>& outcomes, const Allowance& allowed, const GateRunInfo& info);

}  // namespace flashprobe::gate
