// The gate's verdict rule (gate_verdict.h) and the replay line (replay.h), pure functions: a property
// that ran zero cases is never a pass, whatever the reason, and fails the gate unless allowed by
// name; the reproduction line survives a round trip, paths with spaces and quotes included.
#include <gtest/gtest.h>

#include "flashprobe/core/error.h"
#include "flashprobe/gate/gate_verdict.h"
#include "flashprobe/gate/replay.h"

using namespace flashprobe;
using namespace flashprobe::gate;

TEST(GateVerdict, CasesRunPassAFailureFails) {
  RunFacts f;
  f.cases_run = 150;
  EXPECT_EQ(gate_verdict(f).status, GateStatus::passed);
  f.failure = "Falsifiable after 3 tests";
  f.cases_run = 2;
  const GateVerdict v = gate_verdict(f);
  EXPECT_EQ(v.status, GateStatus::failed);
  EXPECT_EQ(v.why, "Falsifiable after 3 tests");
}

TEST(GateVerdict, ZeroCasesIsNotExercisedWithItsCause) {
  RunFacts f;
  f.refusals = 1000;
  f.refusal_reasons = most_frequent({{"dtype=f32: not supported", 2}, {"window_left=3: not implemented", 998}});
  GateVerdict v = gate_verdict(f);
  EXPECT_EQ(v.status, GateStatus::not_exercised);
  EXPECT_EQ(v.cause, Unexercised::refused);
  EXPECT_NE(v.why.find("refused every generated problem"), std::string::npos) << v.why;
  EXPECT_NE(v.why.find("window_left=3"), std::string::npos) << v.why;
  // Every reason with its count, the most frequent first: one reason's last word hides the others.
  EXPECT_LT(v.why.find("'window_left=3: not implemented' (998)"), v.why.find("'dtype=f32: not supported' (2)")) << v.why;
  f = RunFacts{};
  f.discarded = 1500;
  EXPECT_EQ(gate_verdict(f).cause, Unexercised::discarded);
  f = RunFacts{};
  f.budget_spent = true;
  v = gate_verdict(f);
  EXPECT_EQ(v.cause, Unexercised::budget);
  EXPECT_NE(v.why.find("time budget"), std::string::npos);
  f = RunFacts{};
  f.device_refusal = "arch=sm_80: wgmma exists on sm_90 only";
  f.cases_run = 0;
  v = gate_verdict(f);
  EXPECT_EQ(v.cause, Unexercised::device);
  EXPECT_NE(v.why.find("sm_90"), std::string::npos);
  f = RunFacts{};
  f.dtype_refusal = "takes no f32 inputs";
  EXPECT_EQ(gate_verdict(f).cause, Unexercised::dtype);
  // Nothing run and nothing refused or discarded is still not a pass.
  EXPECT_EQ(gate_verdict(RunFacts{}).status, GateStatus::not_exercised);
  EXPECT_EQ(gate_status_name(GateStatus::not_exercised), "not_exercised");
}

// The harness short of device memory: not exercised (cause memory) even after cases held - never a
// pass - and never the kernel's failure; a real failure before it still wins.
TEST(GateVerdict, AShortageOfDeviceMemoryIsNotExercisedNeverPassedNorFailed) {
  RunFacts f;
  f.device_memory = "device memory: LargeOffsetsAgree's Q tensor: 8606712064 bytes wanted";
  GateVerdict v = gate_verdict(f);
  EXPECT_EQ(v.status, GateStatus::not_exercised);
  EXPECT_EQ(v.cause, Unexercised::memory);
  EXPECT_EQ(unexercised_name(v.cause), "memory");
  EXPECT_NE(v.why.find("not the kernel's failure: device memory: LargeOffsetsAgree's Q tensor"), std::string::npos) << v.why;
  EXPECT_TRUE(fails_gate(v, "LargeOffsetsAgree", Allowance{}));
  f.cases_run = 40;
  v = gate_verdict(f);
  EXPECT_EQ(v.status, GateStatus::not_exercised);
  EXPECT_NE(v.why.find("40 case(s) had held before it, not counted as a pass"), std::string::npos) << v.why;
  f.failure = "Falsifiable after 12 tests";
  EXPECT_EQ(gate_verdict(f).status, GateStatus::failed);
}

TEST(GateVerdict, NotExercisedFailsTheGateUnlessAllowedByName) {
  RunFacts f;
  f.refusals = 5;
  const GateVerdict v = gate_verdict(f);
  Allowance none, one, all;
  one.properties = {"WindowsAgreeWithOracle"};
  all.all = true;
  EXPECT_TRUE(fails_gate(v, "WindowsAgreeWithOracle", none));
  EXPECT_FALSE(fails_gate(v, "WindowsAgreeWithOracle", one));
  EXPECT_TRUE(fails_gate(v, "AgreesWithOracle", one));
  EXPECT_FALSE(fails_gate(v, "AgreesWithOracle", all));
  RunFacts bad;
  bad.failure = "x";
  bad.cases_run = 3;
  EXPECT_TRUE(fails_gate(gate_verdict(bad), "AgreesWithOracle", all));  // an allowance never excuses a failure
  RunFacts good;
  good.cases_run = 3;
  EXPECT_FALSE(fails_gate(gate_verdict(good), "AgreesWithOracle", none));
}

TEST(ReplayLine, RoundTripsWithAwkwardPaths) {
  const ReplayLine r{"plugin", "/tmp/my dir/it's 100%/libx.so", "AgreesWithOracle", "bf16", "AbC-_09xyz"};
  const std::string line = format_replay(r);
  EXPECT_EQ(line.find(' ', line.find("plugin=")), line.find(" property="));  // the path holds no raw space
  EXPECT_EQ(line.find('\''), std::string::npos);
  EXPECT_EQ(parse_replay(line), r);
  EXPECT_EQ(replay_command(r), "flashprobe gate --replay '" + line + "'");
  const ReplayLine k{"kernel", "mma", "SplitsAgree", "", "Q"};
  EXPECT_EQ(format_replay(k), "kernel=mma property=SplitsAgree rc=Q");
  EXPECT_EQ(parse_replay("  kernel=mma   property=SplitsAgree rc=Q "), k);
}

TEST(ReplayLine, MalformedLinesNameWhatIsWrong) {
  const auto message = [](const std::string& line) {
    try {
      parse_replay(line);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("property=P rc=Q").find("names no subject"), std::string::npos);
  EXPECT_NE(message("kernel=mma rc=Q").find("property"), std::string::npos);
  EXPECT_NE(message("kernel=mma property=P").find("rc="), std::string::npos);
  EXPECT_NE(message("kernel=mma property=P rc=Q color=red").find("unknown key 'color'"), std::string::npos);
  EXPECT_NE(message("kernel=mma plugin=x property=P rc=Q").find("two subjects"), std::string::npos);
  EXPECT_NE(message("kernel=mma property=P rc=Q%4").find("two hex digits"), std::string::npos);
  EXPECT_NE(message("kernel=mma property=P rc=Q extra").find("'extra' is not key=value"), std::string::npos);
}

TEST(GateVerdict, MostFrequentKeepsTheTopReasonsInOrder) {
  const auto top = most_frequent({{"a", 1}, {"b", 50}, {"c", 7}, {"d", 50}, {"e", 3}});
  ASSERT_EQ(top.size(), kRefusalReasons);
  EXPECT_EQ(top[0], (std::pair<std::string, long long>{"b", 50}));
  EXPECT_EQ(top[1], (std::pair<std::string, long long>{"d", 50}));
  EXPECT_EQ(top[2], (std::pair<std::string, long long>{"c", 7}));
}
