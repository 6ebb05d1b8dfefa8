#pragma once
// `flashprobe gate` as a library function, so that CPU tests run the whole command - validation,
// the engine, the summary, JUnit, the record, exit codes, replay - with a host stand-in subject
// in place of a GPU kernel (the resolver decides what a subject reference becomes).
//
//   flashprobe gate --kernel mma --plugin ./libmine.so --cases 200 --junit gate.xml --json gate.json
//   flashprobe gate --replay 'plugin=./libmine.so property=AgreesWithOracle rc=...'
//
// Exit codes: 0 every property held; 1 a property failed, or was not exercised and not allowed
// (--allow-not-exercised NAME|all), or nothing was exercised at all; 2 bad usage (UsageError, naming
// the value and what is allowed) - thrown, the CLI turns it into 2.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/subject.h"

namespace flashprobe::gate {

struct GateArgs {
  std::vector<std::string> kernels, plugins;  // --kernel NAME, --plugin PATH (repeatable)
  std::vector<std::string> hosts;             // a test's host stand-ins (no CLI option)
  std::vector<std::string> properties;        // --property NAME (repeatable); empty: every one that applies
  std::vector<std::string> allow_not_exercised;  // --allow-not-exercised NAME|all (repeatable)
  int cases = 100;
  int max_size = 100;
  std::optional<std::uint64_t> seed;  // none: a random seed, printed and recorded
  std::string dtype;                  // "" every dtype a subject takes
  std::optional<double> time_budget_s;
  BudgetClock clock;                  // the budget's clock (a test's; no CLI option); empty: the steady clock
  std::string junit, json;            // output files ("" none)
  std::string replay;                 // a reproduction line: re-run that one shrunk case
  bool progress = true;               // progress on stderr when it is a terminal
};

struct SubjectRef {
  std::string kind, ref;  // {"kernel", "mma"}, {"plugin", "./libx.so"}, {"host", "..."}
};
// Turns a reference into a subject restricted to a dtype ("" all).
using Resolver = std::function<Subject(const SubjectRef& r, const std::string& dtype)>;
// The CLI's: kernels from the registry, plug-ins through the loader, both on this process's device
// (require_device: NoDevice without one). Host references are refused.
Resolver device_resolver();

// Checks every value before any device is touched. @throws UsageError naming the option, the value
// and what is allowed.
void validate(const GateArgs& a);

// Runs the gate (or the replay) and returns the exit code (0 or 1); writes progress and results to
// out. @throws UsageError for bad usage (exit 2).
int run_gate(const GateArgs& a, const Resolver& resolve, std::ostream& out);

}  // namespace flashprobe::gate
