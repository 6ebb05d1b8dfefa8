// The calibration programs' shared option parser (bench/calibration_util.h): defaults kept, every
// option read, and bad input named with what is allowed (the programs exit 2 with the message)
// instead of std::stoi's uncaught exception or a silently ignored last option.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "calibration_util.h"

namespace flashprobe::bench {
namespace {

std::string parse(std::vector<std::string> args, CalibrationArgs& a) {
  args.insert(args.begin(), "calibrate");
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  return parse_calibration_args(static_cast<int>(argv.size()), argv.data(), a);
}

TEST(CalibrationArgs, DefaultsStayAndOptionsAreRead) {
  CalibrationArgs a{600, 1, 3e5, "", {}, ""};
  EXPECT_EQ(parse({}, a), "");
  EXPECT_EQ(a.problems, 600);
  EXPECT_EQ(parse({"--problems", "12", "--seed", "18446744073709551615", "--max-macs", "2.5e4", "--out", "x.json"}, a), "");
  EXPECT_EQ(a.problems, 12);
  EXPECT_EQ(a.seed, 18446744073709551615ull);
  EXPECT_EQ(a.max_macs, 2.5e4);
  EXPECT_EQ(a.out, "x.json");
}

TEST(CalibrationArgs, BadInputIsNamedWithWhatIsAllowed) {
  CalibrationArgs a{600, 1, 3e5, "", {}, ""};
  EXPECT_EQ(parse({"--problem", "3"}, a), "unknown option --problem (known: --problems --seed --max-macs --out)");
  EXPECT_EQ(parse({"--seed", "1", "--out"}, a), "--out needs a value");
  EXPECT_EQ(parse({"--problems", "many"}, a), "--problems many: not allowed, use an integer >= 1");
  EXPECT_EQ(parse({"--problems", "0"}, a), "--problems 0: not allowed, use an integer >= 1");
  EXPECT_EQ(parse({"--problems", "12x"}, a), "--problems 12x: not allowed, use an integer >= 1");
  EXPECT_EQ(parse({"--seed", "-1"}, a), "--seed -1: not allowed, use an integer in [0, 2^64)");
  EXPECT_EQ(parse({"--max-macs", "inf"}, a), "--max-macs inf: not allowed, use a number > 0 (e.g. 3e5)");
  EXPECT_EQ(parse({"--max-macs", "-3"}, a), "--max-macs -3: not allowed, use a number > 0 (e.g. 3e5)");
  EXPECT_EQ(parse({"--max-macs", ""}, a), "--max-macs : not allowed, use a number > 0 (e.g. 3e5)");
}

// calibrate_backward's --inputs (normal or logits); a program without input modes refuses the option.
TEST(CalibrationArgs, InputModesOnlyWhereTheProgramListsThem) {
  CalibrationArgs a{600, 1, 3e5, "", {"normal", "logits"}, ""};
  EXPECT_EQ(parse({}, a), "");
  EXPECT_EQ(a.inputs, "normal");
  EXPECT_EQ(parse({"--inputs", "logits", "--problems", "5"}, a), "");
  EXPECT_EQ(a.inputs, "logits");
  EXPECT_EQ(parse({"--inputs", "huge"}, a), "--inputs huge: not allowed, use one of normal, logits");
  EXPECT_EQ(parse({"--input", "logits"}, a), "unknown option --input (known: --problems --seed --max-macs --out --inputs)");
  CalibrationArgs plain{600, 1, 3e5, "", {}, ""};
  EXPECT_EQ(parse({"--inputs", "logits"}, plain), "unknown option --inputs (known: --problems --seed --max-macs --out)");
}

}  // namespace
}  // namespace flashprobe::bench
