// The property runs' time ledger: phases add up what their scopes took, outside a ledger nothing is
// counted, and the record lands in $FLASHPROBE_RECORD_DIR.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "flashprobe/core/record.h"
#include "flashprobe/gate/time_ledger.h"

namespace fp = flashprobe::gate;

TEST(TimeLedger, PhasesAreTimedAndRecorded) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "ledger";
  std::filesystem::create_directories(dir);
  setenv("FLASHPROBE_RECORD_DIR", dir.c_str(), 1);
  { const fp::Timed outside(fp::Phase::kernel); }  // no ledger open: not counted anywhere
  fp::ledger_start("k", "P");
  for (int i = 0; i < 3; ++i) {
    fp::ledger_case();
    const fp::Timed t(fp::Phase::oracle);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    const fp::Timed t(fp::Phase::kernel);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fp::ledger_kernel_parts(0.001, 0.004, 0.002);
  fp::ledger_kernel_parts(0.001, 0.004, 0.002);
  fp::ledger_end("passed", 3);
  fp::ledger_kernel_parts(1, 1, 1);  // after the end: not counted
  unsetenv("FLASHPROBE_RECORD_DIR");
  const auto rec = flashprobe::read_json_file((dir / "prop_throughput.json").string());
  EXPECT_EQ(rec.at("schema"), "flashprobe.prop_throughput/1");
  const auto& row = rec.at("rows").back();
  EXPECT_EQ(row.at("kernel"), "k");
  EXPECT_EQ(row.at("runner"), "per-case");  // ledger_start's default
  EXPECT_EQ(row.at("cases"), 3);
  EXPECT_EQ(row.at("cases_run"), 3);
  EXPECT_EQ(row.at("status"), "passed");
  EXPECT_GE(row.at("oracle_s").get<double>(), 0.059);
  EXPECT_GE(row.at("kernel_s").get<double>(), 0.0099);
  EXPECT_LT(row.at("kernel_s").get<double>(), row.at("oracle_s").get<double>());
  EXPECT_EQ(row.at("inputs_s").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(row.at("kernel_upload_s").get<double>(), 0.002);
  EXPECT_DOUBLE_EQ(row.at("kernel_device_s").get<double>(), 0.008);
  EXPECT_DOUBLE_EQ(row.at("kernel_download_s").get<double>(), 0.004);
  EXPECT_GE(row.at("seconds").get<double>(), row.at("oracle_s").get<double>() + row.at("kernel_s").get<double>());
}

// A skipped kernel x property leaves a row saying so (the report counts it as skipped, never passed),
// and a failed one its status and reason.
TEST(TimeLedger, SkipsAndFailuresAreRowsWithTheirStatus) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "ledger-status";
  std::filesystem::create_directories(dir);
  setenv("FLASHPROBE_RECORD_DIR", dir.c_str(), 1);
  fp::ledger_skip("wgmma", "P", "arch=sm_80: wgmma exists on sm_90 only");
  fp::ledger_start("decode", "Q", "arena");
  fp::ledger_end("failed", 0, "ran zero cases");
  unsetenv("FLASHPROBE_RECORD_DIR");
  const auto rows = flashprobe::read_json_file((dir / "prop_throughput.json").string()).at("rows");
  const auto& skip = rows.at(rows.size() - 2);
  EXPECT_EQ(skip.at("status"), "skipped");
  EXPECT_EQ(skip.at("kernel"), "wgmma");
  EXPECT_EQ(skip.at("cases_run"), 0);
  EXPECT_NE(skip.at("reason").get<std::string>().find("sm_90"), std::string::npos);
  EXPECT_EQ(rows.back().at("status"), "failed");
  EXPECT_EQ(rows.back().at("cases_run"), 0);
  EXPECT_EQ(rows.back().at("reason"), "ran zero cases");
  EXPECT_EQ(rows.back().at("runner"), "arena");
}
