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
#include "kernel_props.h"

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
  for (const auto& p : properties_for(m.meta.kernel)) {
    if (!property_device_refusal(p.name, m.kernel, dev).empty()) {
      o.skipped.push_back(p.name + " (" + property_device_refusal(p.name, m.kernel, dev) + ")");
      continue;
    }
    rc::detail::TestMetadata md;
    md.id = "mutant/" + m.meta.name + "/" + p.name;
    md.description = md.id;
    const auto result = rc::detail::checkTestable([&] { p.run(m.kernel, dev); }, md);
    if (result.template is<rc::detail::FailureResult>()) {
      const auto* f = &result.template get<rc::detail::FailureResult>();
      o.killed = true;
      o.property = p.name;
      o.cases += f->numSuccess + 1;
      o.description = f->description;
      std::ostringstream ce;
      for (const auto& [type, value] : f->counterExample) ce << value << "\n";
      o.counterexample = ce.str();
      return o;
    }
    if (result.template is<rc::detail::SuccessResult>()) o.cases += result.template get<rc::detail::SuccessResult>().numSuccess;
  }
  return o;
}

bool is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

TEST(Mutation, EveryMutantIsKilledWithAShrunkCounterexample) {
  FP_SKIP_WITHOUT_GPU();
  apply_budget_from_env();
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
