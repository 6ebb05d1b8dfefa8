// Replays probe records measured on real hardware (reports/data/**/probe-*.json, written by
// `flashprobe probe --all --out-dir DIR` on the GPU: one record per atom, hardware_probe.h) against
// the declared layouts: the registry's documented layouts (PTX ISA: mma.sync, ldmatrix, wgmma) and,
// for nvcuda::wmma, which NVIDIA leaves unspecified, the committed table
// probes/nvidia/wmma_declared.json ("what the H100 showed", filled from the records by
// probes/nvidia/fill_wmma_declared.py). With no records the test skips and says so; a wmma record
// without a declared entry fails, naming the fix.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/layout.h"

namespace fs = std::filesystem;
namespace pr = flashprobe::probes;

namespace {

std::vector<fs::path> probe_records(const fs::path& root) {
  std::vector<fs::path> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto n = e.path().filename().string();
    if (e.is_regular_file() && n.rfind("probe-", 0) == 0 && e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string first_lines(const std::vector<pr::SlotDiff>& d) { return pr::format_diff(d, 4); }

// Every disagreement between the records and the declared layouts, one entry per record problem.
std::vector<std::string> replay(const std::vector<fs::path>& records, const nlohmann::json& wmma_declared) {
  std::vector<std::string> bad;
  for (const auto& path : records) {
    const std::string where = path.filename().string() + ": ";
    try {
      const auto j = flashprobe::read_json_file(path.string());
      if (j.value("schema", "") != "flashprobe.probe/1" || j.value("source", "") != "hardware") {
        bad.push_back(where + "not a hardware probe record (schema flashprobe.probe/1, source \"hardware\")");
        continue;
      }
      const std::string atom = j.at("atom"), kind = j.at("kind");
      if (j.value("status", "") != "probed") {
        bad.push_back(where + atom + " was not probed: " + j.value("reason", "?"));
        continue;
      }
      if (!j.value("ok", false)) bad.push_back(where + atom + " recorded not ok: " + j.value("verdict", "?"));
      if (j.contains("reconciliation") && !j["reconciliation"].value("ok", false))
        bad.push_back(where + atom + ": memory paths and mma did not reconcile: " + j["reconciliation"]["problems"].dump());
      if (kind == "load") {
        const pr::LoadAtomDesc* a = pr::find_load_atom(atom);
        if (!a || !a->expected) {
          bad.push_back(where + "no declared load layout for " + atom);
          continue;
        }
        const auto got = j.at("layout").get<pr::OperandLayout>();
        const auto d = pr::diff(*a->expected, got, pr::Operand::A);
        if (!d.empty()) bad.push_back(where + atom + " differs from its declared layout (" + a->source.text() + "):\n" + first_lines(d));
        continue;
      }
      const pr::AtomDesc* a = pr::find_mma_atom(atom);
      if (!a) {
        bad.push_back(where + "unknown atom " + atom);
        continue;
      }
      const auto got = j.at("layout").get<pr::MmaLayout>();
      pr::MmaLayout declared;
      std::string from;
      if (a->expected) {
        declared = *a->expected;
        from = a->source.text();
      } else if (wmma_declared.contains(atom)) {
        declared = wmma_declared[atom].get<pr::MmaLayout>();
        from = "probes/nvidia/wmma_declared.json";
      } else {
        bad.push_back(where + atom + ": no declared layout (none documented) and none in probes/nvidia/wmma_declared.json; "
                      "fill it from the H100 records with probes/nvidia/fill_wmma_declared.py");
        continue;
      }
      const auto d = pr::diff(declared, got);
      if (!d.empty()) bad.push_back(where + atom + " differs from its declared layout (" + from + "):\n" + first_lines(d));
    } catch (const std::exception& e) {
      bad.push_back(where + "unreadable record: " + e.what());
    }
  }
  return bad;
}

TEST(Replay, RecordedHardwareLayoutsEqualTheDeclaredLayouts) {
  const auto records = probe_records(fs::path(FLASHPROBE_SOURCE_DIR) / "reports" / "data");
  if (records.empty())
    GTEST_SKIP() << "no probe records under reports/data/ yet: run `flashprobe probe --all --out-dir DIR` on an "
                    "H100 and commit DIR/probe-*.json under reports/data/<device>/<run>/";
  const auto declared = flashprobe::read_json_file(
      (fs::path(FLASHPROBE_SOURCE_DIR) / "probes" / "nvidia" / "wmma_declared.json").string());
  const auto bad = replay(records, declared);
  for (const auto& b : bad) ADD_FAILURE() << b;
  std::cout << records.size() << " records replayed, " << bad.size() << " problems\n";
}

// The replay itself, on synthetic records: a faithful ldmatrix record passes, a planted one-slot
// change, an undeclared wmma record and a failed run are each reported.
TEST(Replay, ReportsAPlantedDifferenceAnUndeclaredWmmaAtomAndAFailedRun) {
  const auto dir = fs::temp_directory_path() / ("fp_replay_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto rec = [](const std::string& atom, const std::string& kind, const nlohmann::json& layout) {
    auto j = flashprobe::record_header("probe", false);
    j.update({{"atom", atom}, {"kind", kind}, {"source", "hardware"}, {"status", "probed"}, {"ok", true},
              {"verdict", "matches"}, {"layout", layout}});
    return j;
  };
  const auto* ld = pr::find_load_atom("SM75_LDMATRIX_X1_B16");
  ASSERT_TRUE(ld && ld->expected);
  flashprobe::write_json_file((dir / "probe-good.json").string(), rec(ld->name, "load", *ld->expected));
  EXPECT_TRUE(replay({dir / "probe-good.json"}, nlohmann::json::object()).empty());

  auto planted = *ld->expected;
  planted.set(5, 1, pr::Coord{7, 7});
  flashprobe::write_json_file((dir / "probe-bad.json").string(), rec(ld->name, "load", planted));
  const auto bad = replay({dir / "probe-bad.json"}, nlohmann::json::object());
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("T05V1"), std::string::npos) << bad[0];

  const std::string wmma = "SM80_WMMA_16x16x16_F32F16F16F32_TN";
  const auto* w = pr::find_mma_atom(wmma);
  const auto* sm80 = pr::find_mma_atom("SM80_16x8x16_F32F16F16F32_TN");
  ASSERT_TRUE(w && sm80 && !w->expected);
  // Any layout of the right shape stands in for the H100's (the replay compares, it does not judge).
  pr::MmaLayout table{pr::OperandLayout(16, 16, 32, w->a_slots), pr::OperandLayout(16, 16, 32, w->b_slots),
                      pr::OperandLayout(16, 16, 32, w->c_slots)};
  table.c.set(3, 1, pr::Coord{2, 9});
  flashprobe::write_json_file((dir / "probe-wmma.json").string(), rec(wmma, "mma", table));
  const auto undeclared = replay({dir / "probe-wmma.json"}, nlohmann::json::object());
  ASSERT_EQ(undeclared.size(), 1u);
  EXPECT_NE(undeclared[0].find("wmma_declared.json"), std::string::npos);
  nlohmann::json declared;
  declared[wmma] = table;
  EXPECT_TRUE(replay({dir / "probe-wmma.json"}, declared).empty());
  table.c.set(3, 1, pr::Coord{2, 8});
  declared[wmma] = table;
  EXPECT_EQ(replay({dir / "probe-wmma.json"}, declared).size(), 1u);

  auto failed = rec(sm80->name, "mma", *sm80->expected);
  failed["status"] = "failed";
  failed["reason"] = "cudaErrorLaunchFailure";
  flashprobe::write_json_file((dir / "probe-failed.json").string(), failed);
  const auto f = replay({dir / "probe-failed.json"}, nlohmann::json::object());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].find("not probed"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
