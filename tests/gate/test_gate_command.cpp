// `flashprobe gate` as its library function (gate/command.h) on host stand-in subjects: exit codes,
// the printed summary, the JUnit XML (parsed by Python's XML parser where python3 exists), the gate
// record, the not-exercised rule and its allowance, the time budget, and the replay line printed on a
// failure re-running the same shrunk case.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/gate/command.h"
#include "flashprobe/gate/engine.h"
#include "flashprobe/gate/junit.h"
#include "flashprobe/gate/stand_in_device.h"
#include "flashprobe/gate/subject.h"
#include "flashprobe/gate/time_ledger.h"
#include "host_subject.h"

using namespace flashprobe;
using namespace flashprobe::gate;

namespace {

struct GateRun {
  int code = -1;
  std::string out;
};

// Small problems and few cases: the stand-in's reference costs CPU time on shared CI cores.
GateArgs args(const std::string& host, std::vector<std::string> props) {
  GateArgs a;
  a.hosts = {host};
  a.properties = std::move(props);
  a.cases = 12;
  a.max_size = 30;
  a.seed = 7;
  a.progress = false;
  return a;
}

GateRun run(const GateArgs& a) {
  std::ostringstream out;
  GateRun r;
  r.code = run_gate(a, flashprobe::gate::testing::host_resolver(), out);
  r.out = out.str();
  return r;
}

std::string temp(const std::string& name) { return ::testing::TempDir() + name; }

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string usage_error(const GateArgs& a) {
  try {
    run(a);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no usage error";
}

// Python's XML parser accepts the file (well-formed); skipped without python3 (the content checks run
// either way).
void expect_well_formed(const std::string& path) {
#ifdef FP_PYTHON
  const std::string cmd = std::string(FP_PYTHON) + " -c \"import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])\" '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << path << ":\n" << slurp(path);
#else
  (void)path;
#endif
}

}  // namespace

TEST(GateCommand, ACorrectSubjectPassesWithExit0AndRecordsItsCases) {
  // The command's record is --json only: a test binary's ledger in the same folder is left alone.
  const std::string dir = temp("gate_ledger");
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir + "/prop_throughput.json");
  setenv("FLASHPROBE_RECORD_DIR", dir.c_str(), 1);
  GateArgs a = args("correct", {"AgreesWithOracle", "EveryOutputWritten", "BatchInvariant"});
  a.junit = temp("gate_ok.xml");
  a.json = temp("gate_ok.json");
  const GateRun r = run(a);
  unsetenv("FLASHPROBE_RECORD_DIR");
  EXPECT_FALSE(std::filesystem::exists(dir + "/prop_throughput.json"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("host-correct / AgreesWithOracle: passed, 12 of 12 cases run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host host-correct: 3 run, 0 not exercised (0 allowed), 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-> PASSED"), std::string::npos) << r.out;
  const auto rec = read_json_file(a.json);
  EXPECT_EQ(rec.at("schema"), "flashprobe.gate/1");
  EXPECT_EQ(rec.at("evidence"), "simulated");
  ASSERT_EQ(rec.at("rows").size(), 3u);
  for (const auto& row : rec.at("rows")) {
    EXPECT_EQ(row.at("status"), "passed");
    EXPECT_EQ(row.at("cases_run"), 12);
    EXPECT_EQ(row.at("fails_gate"), false);
  }
  EXPECT_EQ(rec.at("totals").at("run"), 3);
  EXPECT_EQ(rec.at("options").at("seed"), 7);
  const std::string xml = slurp(a.junit);
  expect_well_formed(a.junit);
  EXPECT_NE(xml.find("<testsuites name=\"flashprobe gate\" tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"flashprobe.gate.host host-correct\" name=\"BatchInvariant\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
}

// A planted bug fails with a shrunk case; the printed reproduction line is a complete --replay
// argument that re-runs the same case (and fails again); the JUnit failure carries both.
TEST(GateCommand, APlantedBugFailsWithAShrunkCaseThatReplays) {
  GateArgs a = args("scales-2-key-rows", {"AgreesWithOracle"});
  a.junit = temp("gate_bug.xml");
  a.json = temp("gate_bug.json");
  const GateRun r = run(a);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("host-scales-2-key-rows / AgreesWithOracle: FAILED"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("reproduce: flashprobe gate --replay '([^']+)'"))) << r.out;
  const std::string line = m[1];
  const auto rec = read_json_file(a.json);
  const auto& row = rec.at("rows").at(0);
  EXPECT_EQ(row.at("status"), "failed");
  const int sk = row.at("counterexample").at("problem").at("sk");
  EXPECT_EQ(sk, 2) << row.dump();  // the bug needs 2 keys: shrinking keeps them and drops the rest
  EXPECT_EQ(row.at("counterexample").at("problem").at("batch"), 1) << row.dump();
  EXPECT_NE(row.at("replay").get<std::string>().find(line), std::string::npos);

  const std::string xml = slurp(a.junit);
  expect_well_formed(a.junit);
  EXPECT_NE(xml.find("<failure type=\"failed\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("shrunk case:"), std::string::npos) << xml;
  EXPECT_NE(xml.find("&quot;sk&quot;: " + std::to_string(sk)), std::string::npos) << xml;
  EXPECT_NE(xml.find("flashprobe gate --replay &apos;" + line), std::string::npos) << xml;

  GateArgs re;
  re.replay = line;
  re.progress = false;
  re.json = temp("gate_replay.json");
  const GateRun rr = run(re);
  EXPECT_EQ(rr.code, 1) << rr.out;
  EXPECT_NE(rr.out.find("replaying host host-scales-2-key-rows"), std::string::npos) << rr.out;
  const auto again = read_json_file(re.json).at("rows").at(0);
  EXPECT_EQ(again.at("counterexample"), row.at("counterexample")) << again.dump();
  EXPECT_EQ(again.at("replayed"), true);
}

// The replay of a case on a subject where it holds (the bug fixed) passes and says the failure did
// not reproduce.
TEST(GateCommand, AReplayOnAFixedSubjectPasses) {
  const GateRun r = run(args("scales-2-key-rows", {"AgreesWithOracle"}));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("--replay '([^']+)'"))) << r.out;
  GateArgs re;
  re.replay = std::regex_replace(std::string(m[1]), std::regex("host=scales-2-key-rows"), "host=correct");
  re.progress = false;
  const GateRun rr = run(re);
  EXPECT_EQ(rr.code, 0) << rr.out;
  EXPECT_NE(rr.out.find("did not reproduce"), std::string::npos) << rr.out;
}

// supports() refusing every problem of a property is "not exercised": a failure unless allowed by
// name, shown as a JUnit failure of type not_exercised, or as skipped when allowed.
TEST(GateCommand, NotExercisedFailsUnlessAllowed) {
  GateArgs a = args("refuses-batches", {"AgreesWithOracle", "BatchInvariant"});
  a.junit = temp("gate_nx.xml");
  GateRun r = run(a);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("BatchInvariant: NOT EXERCISED (not allowed), 0 of 12 cases run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused every generated problem"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 run, 1 not exercised (0 allowed), 1 failed"), std::string::npos) << r.out;
  std::string xml = slurp(a.junit);
  expect_well_formed(a.junit);
  EXPECT_NE(xml.find("<failure type=\"not_exercised\""), std::string::npos) << xml;

  a.allow_not_exercised = {"BatchInvariant"};
  a.json = temp("gate_nx.json");
  r = run(a);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("not exercised (allowed)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 run, 1 not exercised (1 allowed), 0 failed"), std::string::npos) << r.out;
  xml = slurp(a.junit);
  expect_well_formed(a.junit);
  EXPECT_NE(xml.find("skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"not exercised (allowed): "), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  const auto row = read_json_file(a.json).at("rows").at(1);
  EXPECT_EQ(row.at("status"), "not_exercised");
  EXPECT_EQ(row.at("cause"), "refused");
  EXPECT_EQ(row.at("allowed"), true);
}

// A launch that fails (a plug-in's launch returning an error) fails the property with the error, never
// passes or discards the case.
TEST(GateCommand, ALaunchThatFailsFailsTheProperty) {
  const GateRun r = run(args("launch-fails", {"AgreesWithOracle"}));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("host-launch-fails / AgreesWithOracle: FAILED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cudnnBackendExecute: CUDNN_STATUS_EXECUTION_FAILED"), std::string::npos) << r.out;
}

// The harness short of device memory (LargeOffsetsAgree's tensors do not fit on a stand-in H100 with
// 1 GiB free) is told apart from the kernel failing: the property is not run, naming the tensor, the
// bytes and the runtime's free / total; the gate exits 1; JUnit has an error (not a failure); the
// summary and the record count it. Allowed by name, it is a skip, never a pass.
TEST(GateCommand, AShortageOfDeviceMemoryIsTheHarnessesNotTheKernels) {
  setenv("FLASHPROBE_GATE_LOCK_DIR", ::testing::TempDir().c_str(), 1);
  setenv("FLASHPROBE_GATE_LOCK_WAIT_S", "0.2", 1);
  GateArgs a = args("short-of-memory", {"AgreesWithOracle", "LargeOffsetsAgree"});
  a.junit = temp("gate_oom.xml");
  a.json = temp("gate_oom.json");
  GateRun r = run(a);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("host-short-of-memory / AgreesWithOracle: passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host-short-of-memory / LargeOffsetsAgree: NOT RUN, the harness is short of device memory (not allowed), 0 of 12"),
            std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("LargeOffsetsAgree: FAILED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not the kernel's failure: device memory: LargeOffsetsAgree's Q tensor: 8606712064 bytes wanted, the runtime "
                       "has 1024 MiB free of 81920 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host host-short-of-memory: 1 run, 1 not exercised (0 allowed, 1 for lack of device memory), 1 failed"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-> FAILED"), std::string::npos) << r.out;
  std::string xml = slurp(a.junit);
  expect_well_formed(a.junit);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\" errors=\"1\" skipped=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error type=\"device_memory\" message=\"not exercised: the harness could not allocate device memory"),
            std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  const auto rec = read_json_file(a.json);
  const auto& row = rec.at("rows").at(1);
  EXPECT_EQ(row.at("status"), "not_exercised");
  EXPECT_EQ(row.at("cause"), "memory");
  EXPECT_EQ(row.at("fails_gate"), true);
  EXPECT_EQ(rec.at("totals").at("device_memory"), 1);

  a.allow_not_exercised = {"LargeOffsetsAgree"};
  r = run(a);
  unsetenv("FLASHPROBE_GATE_LOCK_DIR");
  unsetenv("FLASHPROBE_GATE_LOCK_WAIT_S");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("LargeOffsetsAgree: not exercised (allowed)"), std::string::npos) << r.out;
  xml = slurp(a.junit);
  EXPECT_NE(xml.find("errors=\"0\" skipped=\"1\""), std::string::npos) << xml;
}

// A buffer of the runner that does not fit (in any property, in any case) ends the run as the
// harness's shortage too: no case starts after it, and the kernel is not blamed.
TEST(GateCommand, AShortageInACaseEndsTheRunAsTheHarnesses) {
  GateArgs a = args("runner-short-of-memory", {"AgreesWithOracle"});
  a.junit = temp("gate_oom_case.xml");
  const GateRun r = run(a);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("AgreesWithOracle: NOT RUN, the harness is short of device memory (not allowed), 0 of 12 cases run (0 discarded"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device memory: a guard-banded device buffer of 4096 bytes: 12288 bytes wanted"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("shrunk case"), std::string::npos) << r.out;
  EXPECT_NE(slurp(a.junit).find("errors=\"1\""), std::string::npos);
}

// A gate that exercised nothing does not pass, even with every property allowed.
TEST(GateCommand, NothingExercisedNeverPasses) {
  GateArgs a = args("refuses-all", {"AgreesWithOracle"});
  a.allow_not_exercised = {"all"};
  const GateRun r = run(a);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("nothing was exercised"), std::string::npos) << r.out;
}

// The time budget stops starting cases and says so, and is shared: the first property is cut short
// at its share, and the next still runs cases (with one deadline for the whole command the first
// took it all and the second ran none: not exercised). The budget is read on a clock that moves 20 ms
// each time the stand-in runs, so what it stops is the same under any load: 0.4 s is 20 runs, the
// first property's share half of it (10 runs), the second what is left (10 more).
TEST(GateCommand, TheTimeBudgetStopsStartingCasesAndSaysSo) {
  auto elapsed = std::make_shared<std::chrono::steady_clock::duration>();
  auto runs = std::make_shared<long>(0);
  const Resolver clocked = [hosts = flashprobe::gate::testing::host_resolver(), elapsed, runs](const SubjectRef& ref,
                                                                                              const std::string& dtype) {
    Subject s = hosts(ref, dtype);
    s.run = [run = s.run, elapsed, runs](const kernels::KernelInfo& k, const AttnProblem& p, const AttnInputs& in) {
      *elapsed += std::chrono::milliseconds(20);
      ++*runs;
      return run(k, p, in);
    };
    return s;
  };
  GateArgs a = args("correct", {"AgreesWithOracle", "EveryOutputWritten"});
  a.cases = 1000;
  a.time_budget_s = 0.4;
  a.clock = [elapsed] { return std::chrono::steady_clock::time_point{} + *elapsed; };
  a.json = temp("gate_budget.json");
  a.junit = temp("gate_budget.xml");
  std::ostringstream out;
  const int code = run_gate(a, clocked, out);
  const std::string text = out.str();
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("cut short by the time budget"), std::string::npos) << text;
  EXPECT_NE(text.find("time budget of 0.4 s spent: 2 properties cut short, 0 with no case run"), std::string::npos) << text;
  EXPECT_EQ(*runs, 20) << text;  // no case starts once the budget is spent
  const auto rec = read_json_file(a.json);
  EXPECT_EQ(rec.at("budget_spent"), true);
  const auto& first = rec.at("rows").at(0);
  EXPECT_EQ(first.at("status"), "passed");
  EXPECT_EQ(first.at("budget_cut"), true);
  EXPECT_EQ(first.at("cases_run").get<int>(), 10);
  const auto& second = rec.at("rows").at(1);
  EXPECT_EQ(second.at("status"), "passed");
  EXPECT_EQ(second.at("budget_cut"), true);
  EXPECT_EQ(second.at("cases_run").get<int>(), 10);
  EXPECT_NE(slurp(a.junit).find("the time budget cut the run short"), std::string::npos);
}

TEST(GateCommand, BadUsageNamesTheValueAndWhatIsAllowed) {
  GateArgs a = args("correct", {});
  a.cases = 0;
  EXPECT_NE(usage_error(a).find("--cases 0"), std::string::npos);
  a = args("correct", {});
  a.dtype = "f64";
  EXPECT_NE(usage_error(a).find("--dtype f64: not a dtype; allowed: f16, bf16, f32"), std::string::npos);
  a = args("correct", {"Nope"});
  std::string m = usage_error(a);
  EXPECT_NE(m.find("--property Nope"), std::string::npos) << m;
  EXPECT_NE(m.find("AgreesWithOracle"), std::string::npos) << m;
  a = args("correct", {"SplitsAgree"});
  EXPECT_NE(usage_error(a).find("applies to none of the subjects"), std::string::npos);
  a = args("correct", {});
  a.allow_not_exercised = {"Windows"};
  EXPECT_NE(usage_error(a).find("--allow-not-exercised Windows"), std::string::npos);
  a = args("correct", {});
  a.time_budget_s = -1;
  EXPECT_NE(usage_error(a).find("--time-budget"), std::string::npos);
  a = args("correct", {});
  a.junit = "/nonexistent-folder/x.xml";
  EXPECT_NE(usage_error(a).find("/nonexistent-folder"), std::string::npos);
  a = GateArgs{};
  EXPECT_NE(usage_error(a).find("no subject"), std::string::npos);
  a = args("correct", {});
  a.replay = "host=correct property=AgreesWithOracle rc=x";
  EXPECT_NE(usage_error(a).find("--replay takes the subject"), std::string::npos);
  a = GateArgs{};
  a.replay = "host=correct property=AgreesWithOracle rc=%%%";
  EXPECT_NE(usage_error(a).find("two hex digits"), std::string::npos);
  a = GateArgs{};
  a.replay = "host=correct property=AgreesWithOracle rc=notarapidcheckstring";
  EXPECT_NE(usage_error(a).find("not a RapidCheck reproduce string"), std::string::npos);
}

// The gate on the case arena (host memory standing in for the device): a correct kernel passes every
// property it is given; a kernel that writes its outputs on its first launch only passes that case and
// fails the next (its outputs are poison again, the oracle and the poison count see it), although the
// previous case's correct outputs sat in the same buffers.
TEST(GateCommand, OnTheCaseArenaAStaleOutputFailsFromTheSecondCase) {
  const GateRun ok = run(args("arena-correct", {"AgreesWithOracle", "EveryOutputWritten", "GuardBandsIntact", "Deterministic"}));
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("host-arena-correct / AgreesWithOracle: passed, 12 of 12 cases run"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("host host-arena-correct: 4 run, 0 not exercised (0 allowed), 0 failed"), std::string::npos) << ok.out;
  for (const char* prop : {"AgreesWithOracle", "EveryOutputWritten"}) {
    GateArgs a = args("arena-writes-once", {prop});
    a.json = temp("gate_arena_stale.json");
    const GateRun bad = run(a);
    EXPECT_EQ(bad.code, 1) << bad.out;
    EXPECT_NE(bad.out.find(std::string("host-arena-writes-once / ") + prop + ": FAILED"), std::string::npos) << bad.out;
    const auto row = read_json_file(a.json).at("rows").at(0);
    EXPECT_EQ(row.at("status"), "failed") << row.dump();
  }
}

// The device runner is chosen by $FLASHPROBE_CASE_ARENA (the per-case runner unless it is 1); making
// an arena subject touches no GPU (the arena is made at its first run), and any other value is refused.
TEST(GateSubject, CaseArenaIsChosenByTheEnvironment) {
  const DeviceInfo dev = stand_in_h100();
  unsetenv("FLASHPROBE_CASE_ARENA");
  const Subject plain = builtin_subject("tiled", dev, "f16");
  EXPECT_EQ(plain.runner, "per-case");
  EXPECT_FALSE(plain.run_case);
  setenv("FLASHPROBE_CASE_ARENA", "1", 1);
  const Subject arena = builtin_subject("tiled", dev, "f16");
  EXPECT_EQ(arena.runner, "arena");
  EXPECT_TRUE(arena.run_case);
  setenv("FLASHPROBE_CASE_ARENA", "yes", 1);
  try {
    (void)builtin_subject("tiled", dev, "f16");
    ADD_FAILURE() << "FLASHPROBE_CASE_ARENA=yes was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'yes'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("allowed are 0"), std::string::npos) << e.what();
  }
  setenv("FLASHPROBE_CASE_ARENA", "0", 1);
  EXPECT_EQ(builtin_subject("tiled", dev, "f16").runner, "per-case");
  unsetenv("FLASHPROBE_CASE_ARENA");
}

TEST(GateJunit, EscapesMarkupControlCharactersAndInvalidUtf8) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n", 6)), "x\\x01y\tz\n");
  EXPECT_EQ(xml_escape("\xC3\xA9"), "\xC3\xA9");  // é kept
  EXPECT_EQ(xml_escape("\xFF"), "\\xFF");
  Outcome o;
  o.subject = "k<1>";
  o.kind = "plugin";
  o.property = "AgreesWithOracle";
  o.verdict = {GateStatus::failed, Unexercised::none, std::string("bad \x02 \"value\" & <more>\xFE")};
  o.counterexample = nlohmann::json{{"problem", {{"sk", 5}}}};
  o.replay = "flashprobe gate --replay 'plugin=/x property=AgreesWithOracle rc=Q'";
  const std::string path = temp("gate_escape.xml");
  write_junit(path, {o}, Allowance{});
  expect_well_formed(path);
  const std::string xml = slurp(path);
  EXPECT_NE(xml.find("name=\"plugin k&lt;1&gt;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("bad \\x02 &quot;value&quot; &amp; &lt;more&gt;\\xFE"), std::string::npos) << xml;
}

// The ledger counts each property's cases per path of the kernel (kernel_domain.h: kernel_paths; here
// decode's two plans, on the host stand-in run as decode), the cases that ran to the end: the soak sums
// them and fails a kernel x dtype where a path got none (scripts/gpu/soak_summary.py).
TEST(GateEngine, TheLedgerCountsTheCasesOfEachPathOfTheKernel) {
  const std::string dir = temp("gate_paths");
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir + "/prop_throughput.json");
  Subject s = flashprobe::gate::testing::host_subject("correct", "");
  s.kernel.name = "decode";  // its paths: decode's plans (the runner stays the host's)
  s.kind = "kernel";
  s.domain.max_sq = 4;
  RunOptions o;
  o.cases = 40;
  o.max_size = 30;
  o.seed = 3;
  o.progress = false;
  ledger_keep_record(true);  // (the command turns the ledger's file off: a test binary's ledger is on)
  setenv("FLASHPROBE_RECORD_DIR", dir.c_str(), 1);
  const Outcome r = run_property(s, "AgreesWithOracle", o);
  unsetenv("FLASHPROBE_RECORD_DIR");
  ASSERT_EQ(r.verdict.status, GateStatus::passed) << r.verdict.why;
  const auto row = read_json_file(dir + "/prop_throughput.json").at("rows").back();
  ASSERT_TRUE(row.contains("paths")) << row.dump();
  const long long half = row.at("paths").at("plan half (one-row blocks)"), full = row.at("paths").at("plan full (several-row blocks)");
  EXPECT_EQ(half + full, r.facts.cases_run) << row.dump();
  EXPECT_GT(half, 0) << row.dump();
  EXPECT_GT(full, 0) << row.dump();
  // A subject without paths (not mma, wgmma or decode) has none in its row.
  s.kernel.name = "host-correct";
  setenv("FLASHPROBE_RECORD_DIR", dir.c_str(), 1);
  (void)run_property(s, "AgreesWithOracle", o);
  unsetenv("FLASHPROBE_RECORD_DIR");
  EXPECT_FALSE(read_json_file(dir + "/prop_throughput.json").at("rows").back().contains("paths"));
}
