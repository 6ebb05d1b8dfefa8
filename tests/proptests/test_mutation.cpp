// Mutation testing: the property suite must kill every mutant of the catalogue. For each
// mutant, the properties of its production kernel run in order until one fails; the record names the
// property that killed it, the cases run until then (over every property tried, the killing case
// included) and RapidCheck's shrunk counterexample. A property the device cannot run
// (LargeOffsetsAgree without the memory) is listed as not run. A surviving mutant fails the run.
// Labels gpu + mutation; `flashprobe check --mutants` runs this binary. Skips without a GPU.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>

#include "../common/gpu_skip.h"
#include "flashprobe/core/record.h"
#include "flashprobe/kernels/mutants.h"
#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/properties.h"
#include "flashprobe/proptests/generators.h"

namespace flashprobe::proptests {
namespace {

struct Outcome {
  bool killed = false;
  std::string property, counterexample, description;
  int cases = 0;
  std::vector<std::string> skipped;  // properties the device could not run, with the reason
};

Outcome hunt(const kernels::Mutant& m, const DeviceInfo& dev) {
  Outcome o;
  const gate::Subject s = gate::builtin_subject(m.kernel, m.meta.kernel, dev, "");
  const auto& cfg = rc::detail::configuration();
  gate::RunOptions opt;
  opt.cases = cfg.testParams.maxSuccess;
  opt.max_size = cfg.testParams.maxSize;
  opt.seed = cfg.testParams.seed;
  for (const auto& p : gate::properties_for(m.meta.kernel)) {
    opt.test_id = "mutant/" + m.meta.name + "/" + p.name;
    const gate::Outcome r = gate::run_property(s, p.name, opt);
    if (r.verdict.status == gate::GateStatus::not_exercised && r.verdict.cause == gate::Unexercised::device) {
      o.skipped.push_back(p.name + " (" + r.verdict.why + ")");
      continue;
    }
    o.cases += static_cast<int>(r.facts.cases_run);
    if (r.verdict.status == gate::GateStatus::failed && !r.reproduce.empty()) {  // a shrunk counterexample, not a give-up
      o.killed = true;
      o.property = p.name;
      o.cases += 1;
      o.description = r.verdict.why;
      o.counterexample = r.case_id + "\n" + (r.counterexample.is_null() ? std::string() : r.counterexample.dump());
      return o;
    }
  }
  return o;
}

bool is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

TEST(Mutation, EveryMutantIsKilledWithAShrunkCounterexample) {
  FP_SKIP_WITHOUT_GPU();
  apply_budget_from_env();  // RC_PARAMS from FLASHPROBE_PROP_*: the engine's options below
  const DeviceInfo dev = require_device();
  nlohmann::json rec = record_header("mutants");
  rec["mutants"] = nlohmann::json::array();
  int survived = 0;
  for (const auto& m : kernels::mutants()) {
    const Outcome o = hunt(m, dev);
    // Races need not show in outputs on a given run: mutants whose killer is the race detector are
    // killed by compute-sanitizer racecheck (scripts/gpu/run-all sanitize asserts it), not here.
    const bool delegated = !o.killed && m.meta.killed_by.find("racecheck") != std::string::npos;
    std::cout << (o.killed ? "KILLED   " : delegated ? "RACECHECK" : "SURVIVED ") << " " << m.meta.name
              << (o.killed ? " by " + o.property : "") << " after " << o.cases << " case(s)\n";
    if (o.killed) std::cout << "  shrunk: " << o.counterexample.substr(0, 400) << "\n";
    for (const auto& sk : o.skipped) std::cout << "  not run on this device: " << sk << "\n";
    if (!o.killed && !delegated) ++survived;
    rec["mutants"].push_back({{"name", m.meta.name}, {"kernel", m.meta.kernel}, {"description", m.meta.description},
                              {"mirrors", m.meta.mirrors}, {"expected_killer", m.meta.killed_by}, {"killed", o.killed},
                              {"killed_by", o.killed ? o.property : delegated ? "compute-sanitizer racecheck (sanitize stage)" : ""},
                              {"cases", o.cases}, {"counterexample", o.counterexample},
                              {"failure", o.description.substr(0, 2000)}, {"skipped_properties", o.skipped}});
    if (m.meta.name == "softmax_block_not_pow2" && o.killed) {
      std::smatch sm;
      const std::string& ce = o.counterexample;
      ASSERT_TRUE(std::regex_search(ce, sm, std::regex("_sk(\\d+)_"))) << ce;
      const long sk = std::stol(sm[1]);
      EXPECT_FALSE(is_pow2(sk)) << "the softmax-block mutant must shrink to a non-power-of-two key count, got sk=" << sk;
      rec["mutants"].back()["shrunk_sk"] = sk;
    }
  }
  if (const char* dir = std::getenv("FLASHPROBE_RECORD_DIR")) {
    std::filesystem::create_directories(dir);
    write_json_file(std::string(dir) + "/mutants.json", rec);
  }
  EXPECT_EQ(survived, 0) << survived << " mutant(s) survived the property suite";
}

}  // namespace
}  // namespace flashprobe::proptests
