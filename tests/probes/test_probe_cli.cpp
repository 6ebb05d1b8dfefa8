// `flashprobe probe`: simulated runs, records that never claim hardware, exit codes, `list atoms`.
#include <gtest/gtest.h>

#include "../common/run_cli.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace {
using Result = flashprobe::testing::CliResult;
Result run(const std::string& args) { return flashprobe::testing::run_cli(args); }
}  // namespace

TEST(ProbeCli, SimulateOneAtomPrintsVerdictFormulaAndGridAndWritesARecord) {
  const std::string path = ::testing::TempDir() + "probe_sim.json";
  auto r = run("probe --simulate GFX11_WMMA_16x16x16_F32F16_W32 --json " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict: matches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("row = 2*slot + (lane >> 4); col = lane & 15"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("T16V0"), std::string::npos) << r.out;
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j.at("schema"), "flashprobe.probe/1");
  EXPECT_EQ(j.at("source"), "simulated");
  EXPECT_EQ(j.at("measured_on_hardware"), false);
  ASSERT_EQ(j.at("results").size(), 1u);
  EXPECT_EQ(j["results"][0].at("source"), "simulated");
  EXPECT_EQ(j["results"][0].at("verdict"), "matches");
  EXPECT_TRUE(j["results"][0].at("layout").contains("A"));
}

TEST(ProbeCli, UnknownAtomExits2AndListsTheKnownOnes) {
  auto r = run("probe --simulate NO_SUCH_ATOM");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("SM80_16x8x16_F32F16F16F32_TN"), std::string::npos) << r.out;
  EXPECT_EQ(run("probe").code, 2);
  EXPECT_EQ(run("probe --simulate --replicas maybe SM80_16x8x8_F32F16F16F32_TN").code, 2);
}

TEST(ProbeCli, WithoutAnExecutorAtomsAreSkippedWithTheReason) {
  // --all on hardware: without a device nothing is probed and it says so (exit 0); with one, every
  // atom this build has no executor for (the other vendor's) is skipped with its reason.
  auto all = run("probe --all --no-grids");
  const bool no_device = all.out.find("nothing probed on hardware") != std::string::npos;
  if (no_device) {
    EXPECT_EQ(all.code, 0) << all.out;
    EXPECT_NE(all.out.find("--simulate --all"), std::string::npos) << all.out;
  } else {
    EXPECT_LE(all.code, 1) << all.out;
    EXPECT_NE(all.out.find("CDNA_MFMA_16x16x32_F32E4M3  skipped: "), std::string::npos) << all.out;
  }
  // One named atom that cannot run here is exit 2 with the reason; with an executor and a device
  // (a GPU machine) it probes and exits 0 or 1.
  auto amd = run("probe CDNA_MFMA_16x16x32_F32E4M3 --no-grids");
  EXPECT_EQ(amd.code, 2) << amd.out;
  EXPECT_NE(amd.out.find("CDNA_MFMA_16x16x32_F32E4M3"), std::string::npos) << amd.out;
  auto one = run("probe SM80_16x8x8_F32F16F16F32_TN --no-grids");
  if (no_device) {
    EXPECT_EQ(one.code, 2) << one.out;
    EXPECT_NE(one.out.find("no GPU device"), std::string::npos) << one.out;
  } else {
    EXPECT_LE(one.code, 1) << one.out;
  }
}

TEST(ProbeCli, ListShowsTheAtoms) {
  auto r = run("list atoms");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("CDNA_MFMA_16x16x32_F32E4M3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hardware executor: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("none documented"), std::string::npos) << r.out;
}
