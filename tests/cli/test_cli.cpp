// The CLI contract: exit codes (0 ok, 1 check failed, 2 bad usage) and the no-GPU behaviour.
#include <gtest/gtest.h>

#include "../common/run_cli.h"
#include "../common/temp_file.h"

#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {
using Result = flashprobe::testing::CliResult;
Result run(const std::string& args) { return flashprobe::testing::run_cli(args); }
}  // namespace

TEST(Cli, UnknownCommandExits2WithUsage) {
  auto r = run("nonsense");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
}

TEST(Cli, UnknownOptionExits2) {
  auto r = run("devices --frobnicate");
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(Cli, NoCommandExits2) { EXPECT_EQ(run("").code, 2); }

// Bad values are refused before any device is touched, naming the value and what is allowed.
TEST(Cli, BenchRejectsAnUnknownDtype) {
  auto r = run("bench --dtype f32 --json /dev/null");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("f32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bf16"), std::string::npos) << r.out;
  r = run("bench --max-head-dim 0 --json /dev/null");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("max-head-dim"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("256"), std::string::npos) << "names the range: " << r.out;
  r = run("bench --timing fast --json /dev/null");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("fast"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("graph"), std::string::npos) << r.out;
}

// Kernels and their variants (variants.h) are taken by name; an unknown one is a usage error that
// names it and what is allowed, before any device is touched.
TEST(Cli, BenchAndRunRejectAnUnknownKernelOrVariant) {
  const std::string problem = ::testing::TempDir() + "variant_problem.json";
  {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(problem.c_str(), "w"), &std::fclose);
    std::fputs(R"({"batch": 1, "hq": 2, "hkv": 2, "sq": 4, "sk": 4, "d": 64, "dtype": "f16"})", f.get());
  }
  for (const std::string& cmd : std::vector<std::string>{"bench --json /dev/null --kernel ", "run --out-dir /dev/null --problem " + problem + " --kernel "}) {
    auto r = run(cmd + "mma/order=diagonal");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("mma/order=diagonal"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("mma/order=rows|heads"), std::string::npos) << r.out;
    r = run(cmd + "flash");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("'flash'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ref3pass"), std::string::npos) << r.out;
  }
}

// bench --problem: the file's problems are checked before any device is touched; a bad entry is
// named by file and index, with the field and what is allowed.
TEST(Cli, BenchProblemFilesAreCheckedFirst) {
  const std::string dir = ::testing::TempDir();
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + name;
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
    std::fputs(text.c_str(), f.get());
    return path;
  };
  const std::string good = R"({"batch": 1, "hq": 2, "hkv": 2, "sq": 64, "sk": 64, "d": 64, "dtype": "f16"})";
  auto r = run("bench --json /dev/null --problem " +
               write("sweep_bad.json", "[" + good + R"(, {"batch": 1, "hq": 2, "hkv": 3, "sq": 64, "sk": 64, "d": 64}])"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("sweep_bad.json[1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hkv"), std::string::npos) << r.out;
  r = run("bench --json /dev/null --problem " + write("typo.json", R"({"batch": 1, "heads": 2})"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("heads"), std::string::npos) << r.out;
  r = run("bench --json /dev/null --problem " + write("empty.json", "[]"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("empty array"), std::string::npos) << r.out;
  r = run("bench --json /dev/null --quick --problem " + write("good.json", good));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--quick"), std::string::npos) << r.out;
  r = run("bench --json /dev/null --problem " + dir + "no_such_file.json");
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(Cli, VersionNamesTheCommit) {
  auto r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("commit"), std::string::npos) << r.out;
}

TEST(Cli, DevicesExitsZeroWithOrWithoutAGpu) {
  auto r = run("devices");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(r.out.find("none: no GPU device") != std::string::npos || r.out.find("arch ") != std::string::npos)
      << r.out;
}

TEST(Cli, ListShowsItsSections) {
  auto r = run("list");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* s : {"atoms (", "kernels (", "mutants ("}) EXPECT_NE(r.out.find(s), std::string::npos) << r.out;
  EXPECT_EQ(run("list nosuchsection").code, 2);
}

// Hardware probes: without a GPU, --all says so and exits 0 (nothing to probe is not a failure); a
// named hardware probe exits 2 (what was asked cannot be done here). With a GPU --all probes.
TEST(Cli, ProbeAllWithoutAGpuSaysSoAndExits0) {
  auto r = run("probe --all --no-grids");
  if (r.out.find("no GPU device") == std::string::npos) {
    EXPECT_NE(r.out.find("after device initialisation"), std::string::npos) << r.out;
    EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
    return;
  }
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("--simulate"), std::string::npos) << r.out;
}

namespace {
// bench `args` on one small problem (f16, d = 64, 128 x 128): its exit and the record it wrote.
std::pair<Result, std::string> bench_small_problem(const std::string& name, const std::string& args) {
  const std::string dir = ::testing::TempDir();
  const std::string problem = dir + name + ".json", out = dir + name + "_out.json";
  {
    std::ofstream f(problem);
    f << R"({"batch": 1, "hq": 2, "hkv": 2, "sq": 128, "sk": 128, "d": 64, "dtype": "f16"})";
  }
  const Result r = run("bench " + args + " --min-seconds 0.01 --problem " + problem + " --json " + out);
  std::ifstream f(out);
  return {r, std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>())};
}
}  // namespace

// Every bench record names the kernel the dispatcher picks for its case, one of the kernels timed
// when none is left out (the report draws a run only when it timed that kernel).
TEST(Cli, BenchRecordsTheDispatchersChoice) {
  if (run("devices").out.find("no GPU device") != std::string::npos) GTEST_SKIP() << "no GPU: bench needs one";
  const auto [r, rec] = bench_small_problem("bench_dispatch", "");
  ASSERT_EQ(r.code, 0) << r.out;
  std::set<std::string> timed, dispatched;
  const std::regex kernel("\"kernel\": \"([a-z0-9_]+)\""), chosen("\"dispatched\": \"([a-z0-9_]*)\"");
  for (auto it = std::sregex_iterator(rec.begin(), rec.end(), kernel); it != std::sregex_iterator(); ++it)
    timed.insert((*it)[1]);
  for (auto it = std::sregex_iterator(rec.begin(), rec.end(), chosen); it != std::sregex_iterator(); ++it)
    dispatched.insert((*it)[1]);
  ASSERT_EQ(dispatched.size(), 1u) << rec;
  EXPECT_EQ(timed.count(*dispatched.begin()), 1u) << *dispatched.begin() << " was not timed: " << rec;
}

// bench --backward takes backward kernels by name: a forward kernel's name is refused (exit 2) with
// the backward kernels listed, before any device is touched.
TEST(Cli, BenchBackwardRejectsAForwardKernel) {
  auto r = run("bench --backward --json /dev/null --kernel mma");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--kernel mma with --backward"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mma_bwd_det, mma_bwd, mma_bwd_amd, tiled_bwd, tiled_bwd_det, mma_bwd_k128, mma_bwd_det_k128, mma_bwd_k128_bulk, mma_bwd_fa2, mma_bwd_det_fa2"), std::string::npos) << r.out;
}

// On a GPU: every backward kernel that takes the problem is timed, with 2.5x the forward's FLOPs.
TEST(Cli, BenchBackwardTimesTheBackwardKernels) {
  if (run("devices").out.find("no GPU device") != std::string::npos) GTEST_SKIP() << "no GPU: bench needs one";
  const auto [r, rec] = bench_small_problem("bench_bwd", "--backward");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* k : {"\"mma_bwd\"", "\"mma_bwd_det\"", "\"tiled_bwd\"", "\"tiled_bwd_det\"", "\"mma_bwd_k128\"", "\"mma_bwd_det_k128\"",
                        "\"mma_bwd_k128_bulk\"", "\"mma_bwd_fa2\"", "\"mma_bwd_det_fa2\""})
    EXPECT_NE(rec.find(std::string("\"kernel\": ") + k), std::string::npos) << k << " not timed: " << rec;
  // 4 * 1 * 2 * 128 * 128 * 64 forward FLOPs, times 2.5.
  EXPECT_NE(rec.find("\"flops\": 20971520"), std::string::npos) << rec;
}

TEST(Cli, NamedHardwareProbeWithoutAGpuExits2) {
  auto r = run("probe SM80_16x8x16_F32F16F16F32_TN --no-grids");
  if (r.out.find("no GPU device") == std::string::npos) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(Cli, ProbeOutDirIsForHardwareRecords) {
  auto r = run("probe --simulate --all --out-dir /tmp/never");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--out-dir"), std::string::npos) << r.out;
}

// The executable really contains the NVIDIA executors in the cuda tree (a static library's
// registration code is easily dropped by the linker) and none elsewhere.
TEST(Cli, ListAtomsShowsHardwareExecutorsOfThisBuild) {
  const bool cuda = run("--version").out.find("backend cuda") != std::string::npos;
  auto r = run("list atoms");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* atom : {"SM80_16x8x16_F32F16F16F32_TN ", "SM80_WMMA_16x16x16_F32F16F16F32_TN ",
                           "SM90_64x256x16_F32F16F16_RS ", "SM75_LDMATRIX_X4_B16_TRANS "}) {
    const auto at = r.out.find(atom);
    ASSERT_NE(at, std::string::npos) << atom << "\n" << r.out;
    const auto line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find(cuda ? "hardware executor: yes" : "hardware executor: no"), std::string::npos) << line;
  }
}

using flashprobe::testing::write_temp_file;

// An output that cannot be written stops bench and probe before the work (minutes of timing or
// probing), exit 2 naming the path, as check --json does; nothing is created on the way.
TEST(Cli, UnwritableOutputsAreRefusedBeforeTheWork) {
  const std::string dir = ::testing::TempDir() + "fp_unwritable/";
  std::remove((dir + "plain").c_str());
  std::remove(dir.c_str());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string plain = write_temp_file("fp_unwritable/plain", "x");
  const std::string missing = dir + "no-such-dir/out.json";
  for (const std::string& cmd : {"bench --json " + missing, "bench --json " + dir, "probe --all --no-grids --json " + missing,
                                 "probe --all --no-grids --json " + dir, "probe --all --no-grids --out-dir " + plain,
                                 "probe --all --no-grids --out-dir " + plain + "/sub",
                                 "probe --simulate --all --no-grids --json " + missing}) {
    const auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    const std::string named = cmd.substr(cmd.rfind(' ') + 1);
    EXPECT_NE(r.out.find(named + ": "), std::string::npos) << cmd << ": " << r.out;
    EXPECT_EQ(r.out.find("probed"), std::string::npos) << cmd << ": the work ran first: " << r.out;
  }
  struct stat st{};
  EXPECT_NE(::stat((dir + "no-such-dir").c_str(), &st), 0) << "a check created the directory";
}

// An --out-dir that does not exist yet is fine (it is created when the first record is written).
TEST(Cli, ProbeOutDirMayNotExistYet) {
  const auto r = run("probe --all --no-grids --out-dir " + ::testing::TempDir() + "fp_new_out_dir/a/b");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
}

// select reads the problem as check does: every error names the file (and the field and value).
TEST(Cli, SelectNamesTheProblemFileInItsErrors) {
  const std::string bad_field = write_temp_file("select_bad_field.json", R"({"batch": 1, "heads": 2})");
  const std::string bad_value = write_temp_file("select_bad_value.json", R"({"batch": 1.5, "hq": 2, "hkv": 2})");
  const std::string invalid = write_temp_file("select_invalid.json", R"({"batch": 1, "hq": 2, "hkv": 3})");
  const std::string not_json = write_temp_file("select_not_json.json", "{");
  const std::string absent = ::testing::TempDir() + "select_absent.json";
  for (const auto& [file, what] : std::vector<std::pair<std::string, std::string>>{
           {bad_field, "heads"}, {bad_value, "1.5"}, {invalid, "hkv"}, {not_json, "not valid JSON"}, {absent, "cannot open"}}) {
    const auto r = run("select " + file + " --arch sm_90");
    EXPECT_EQ(r.code, 2) << file << ": " << r.out;
    EXPECT_NE(r.out.find(file + ": "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
  }
}

// flashprobe gate refuses bad values before any device is touched (exit 2, naming the value and what
// is allowed); without a GPU a well-formed gate is an error (2), never a pass (tests/gate tests the
// command's runs on host stand-ins).
TEST(Cli, GateRejectsBadUsageWithExit2) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"gate", {"no subject", "--kernel", "--plugin"}},
      {"gate --kernel mma --cases 0", {"--cases 0"}},
      {"gate --kernel mma --dtype f64", {"f64", "f16, bf16, f32"}},
      {"gate --kernel nosuch", {"nosuch", "mma"}},
      {"gate --kernel mma --property Nope", {"Nope", "AgreesWithOracle"}},
      {"gate --kernel mma --property SplitsAgree", {"applies to none"}},
      {"gate --kernel mma --allow-not-exercised Nope", {"Nope", "all"}},
      {"gate --kernel mma --time-budget -3", {"--time-budget -3: a positive number"}},
      {"gate --replay 'kernel=mma property=AgreesWithOracle rc=abc'", {"rc='abc' is not a RapidCheck reproduce string"}},
      {"gate --plugin /nonexistent/libnothing.so", {"/nonexistent/libnothing.so"}},
      {"gate --kernel mma --junit /nonexistent-dir/g.xml", {"/nonexistent-dir"}},
      {"gate --replay 'kernel=mma rc=x'", {"property"}},
      {"gate --kernel mma --replay 'kernel=mma property=AgreesWithOracle rc=x'", {"--replay takes"}},
      {"gate --kernel mma --cases many", {"many"}}};
  for (const auto& [args, want] : cases) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    for (const auto& w : want) EXPECT_NE(r.out.find(w), std::string::npos) << args << " should name " << w << ":\n" << r.out;
  }
}

TEST(Cli, GateHelpNamesEveryOption) {
  const auto r = run("gate --help");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* o : {"--kernel", "--plugin", "--property", "--cases", "--max-size", "--seed", "--dtype", "--time-budget", "--junit",
                        "--json", "--replay", "--allow-not-exercised", "LargeOffsetsAgree"})
    EXPECT_NE(r.out.find(o), std::string::npos) << o << "\n" << r.out;
}
