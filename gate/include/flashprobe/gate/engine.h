#pragma once
// The gate's engine: one subject x property through RapidCheck (generation, shrinking), counted and
// judged (gate_verdict.h). Every client goes through run_property: `flashprobe gate`, the GoogleTest
// suite test_kernel_props and the mutation suite.
//
// What a run counts: cases that ran to the end, cases discarded (no accepted problem was drawn, or a
// precondition of the property), problems the subject's supports() refused while drawing, and,
// when a case failed, the case it shrank to (its JSON: problem, input seed and kind, splits) and the
// reproduction line that re-runs exactly that case (replay.h).
//
// The time budget is a deadline: when it has passed, no new case starts (cases are discarded at
// once, before drawing) and the outcome says the budget cut it short; a case that failed is still
// shrunk to the end. The deadline is read on RunOptions::clock (the steady clock unless a test
// passes its own, which moves only as its stand-in subject runs cases: what the budget stops is
// then the same under any load).
//
// Example:
//   RunOptions o; o.cases = 150; o.seed = 42;
//   const Outcome r = run_property(builtin_subject("mma", dev, ""), "AgreesWithOracle", o);
//   if (r.verdict.status != GateStatus::passed) std::cout << r.verdict.why << "\n" << r.replay;
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "flashprobe/gate/gate_verdict.h"
#include "flashprobe/gate/subject.h"

namespace flashprobe::gate {

// The clock the time budget is read on; empty: std::chrono::steady_clock::now.
using BudgetClock = std::function<std::chrono::steady_clock::time_point()>;

struct RunOptions {
  int cases = 100;        // RapidCheck's max_success: cases to run to the end
  int max_size = 100;     // RapidCheck's max_size (100: the domains' full size)
  std::uint64_t seed = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // the time budget's end, on clock
  BudgetClock clock;      // the deadline's clock; empty: the steady clock
  std::string reproduce;  // RapidCheck's reproduce string (a replay): run only that case
  std::string dtype;      // the dtype the subject was restricted to ("" all), for the replay line
  std::string test_id;    // RapidCheck's id of the run; "" -> "gate/<subject>/<property>"
  bool progress = true;   // a progress line on stderr when it is a terminal
};

struct Outcome {
  std::string subject, kind, ref, property;
  GateVerdict verdict;
  RunFacts facts;
  std::string message;          // RapidCheck's own result message (the shrunk counterexample, tags)
  nlohmann::json counterexample;  // the shrunk case (Case's JSON), null unless failed
  std::string case_id;          // its id (Case::id(): "b1_hq2_hkv2_sq1_sk5_d64_..."), "" unless failed
  std::string reproduce;        // RapidCheck's reproduce string of it (RC_PARAMS="reproduce=..."), "" unless failed
  std::string replay;           // the --replay argument re-running the shrunk case, "" unless failed
  double seconds = 0;
  std::uint64_t seed = 0;
  int cases_asked = 0;
  bool replayed = false;        // a replay run (one case)
};

// Runs one property on a subject. Device refusals (the subject refuses this device, or the property
// needs more of it), a dtype restriction that leaves no dtype, failures and runs of zero cases come
// back as the verdict, never as an exception; a property name the subject does not have throws
// UsageError naming the ones it has.
Outcome run_property(const Subject& s, const std::string& property, const RunOptions& o);

// @throws UsageError when rc is not RapidCheck's reproduce string of exactly one case.
void check_reproduce(const std::string& rc);

// RapidCheck's reproduce string for one test id from RC_PARAMS="reproduce=..." (what a failure of a
// GoogleTest client prints), as RunOptions::reproduce takes it; "" when RC_PARAMS has none for it.
std::string rc_params_reproduce(const std::string& test_id);

// The current run's case: properties call it with every case they draw (properties.h draw_case).
void note_case(const Case& c);

}  // namespace flashprobe::gate
