// Replays probe records measured on real hardware (reports/data/**/probe-*.json, written by
// test_probes_nvidia_gpu on an H100 with FLASHPROBE_RECORD_DIR set) against the declared layouts:
// the PTX ISA figures for mma.sync, ldmatrix and wgmma; for wmma, which NVIDIA leaves unspecified,
// the declared layout is the committed table probes/nvidia/wmma_declared.json ("what the H100
// showed", filled from the records by probes/nvidia/fill_wmma_declared.py). With no records the
// test skips and says so; a wmma record without a declared entry fails, naming the fix.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "flashprobe/core/record.h"
#include "ptx_expected.h"

namespace fs = std::filesystem;
using flashprobe::nvidia::ptx::RC;

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

// The documented layout of an operand, or nullptr when the family has none.
using Formula = RC (*)(int, int);
Formula documented(const std::string& family, const std::string& atom, const std::string& op) {
  namespace p = flashprobe::nvidia::ptx;
  if (family == "mma.sync") {
    if (op == "C") return p::m16n8_c;
    const bool k16 = atom.find("16x8x16") != std::string::npos, k8 = atom.find("16x8x8_") != std::string::npos;
    if (k16) return op == "A" ? p::m16n8k16_a : p::m16n8k16_b;
    if (k8) return op == "A" ? p::m16n8k8_a : p::m16n8k8_b;
    return op == "A" ? p::m16n8k32_a : p::m16n8k32_b;
  }
  if (family == "wgmma") return op == "A" ? p::wgmma_a : p::wgmma_d;
  return nullptr;
}

// Every disagreement between the records and the declared layouts, one line each.
std::vector<std::string> replay(const std::vector<fs::path>& records, const nlohmann::json& wmma_declared) {
  std::vector<std::string> bad;
  for (const auto& path : records) {
    const auto j = flashprobe::read_json_file(path.string());
    const std::string where = path.filename().string() + ": ";
    if (j.value("source", "") != "hardware") {
      bad.push_back(where + "source is not \"hardware\"");
      continue;
    }
    const std::string family = j.at("family"), atom = j.at("atom");
    if (!j.contains("operands") || j["operands"].empty()) bad.push_back(where + "no operands");
    for (const auto& op : j.value("operands", nlohmann::json::array())) {
      const std::string opname = op.at("name");
      const int lanes = op.at("lanes"), slots = op.at("slots");
      const auto& at = op.at("at");
      const std::string what = where + atom + " " + opname;
      if (at.size() != static_cast<std::size_t>(lanes) * slots) {
        bad.push_back(what + ": table size is not lanes * slots");
        continue;
      }
      if (!op.at("anomalies").empty()) bad.push_back(what + ": recorded anomalies");
      if (family == "wmma") {
        if (!wmma_declared.contains(atom) || !wmma_declared[atom].contains(opname))
          bad.push_back(what + ": no declared wmma layout in probes/nvidia/wmma_declared.json; fill it from the H100 "
                               "records with probes/nvidia/fill_wmma_declared.py");
        else if (at != wmma_declared[atom][opname])
          bad.push_back(what + ": record differs from the declared wmma layout");
        continue;
      }
      const bool trans = atom.find("_TRANS") != std::string::npos;
      const auto f = family == "ldmatrix" ? nullptr : documented(family, atom, opname);
      if (family != "ldmatrix" && !f) {
        bad.push_back(what + ": unknown family " + family);
        continue;
      }
      for (int l = 0; l < lanes; ++l)
        for (int s = 0; s < slots; ++s) {
          const auto w = f ? f(l, s) : flashprobe::nvidia::ptx::ldmatrix(trans, l, s);
          if (at[l * slots + s] != nlohmann::json({w.row, w.col})) {
            bad.push_back(what + " lane " + std::to_string(l) + " slot " + std::to_string(s) + ": recorded " +
                          at[l * slots + s].dump() + ", declared [" + std::to_string(w.row) + "," +
                          std::to_string(w.col) + "]");
            l = lanes;  // one line per operand is enough
            break;
          }
        }
    }
  }
  return bad;
}

TEST(Replay, RecordedHardwareLayoutsEqualTheDeclaredLayouts) {
  const auto records = probe_records(fs::path(FLASHPROBE_SOURCE_DIR) / "reports" / "data");
  if (records.empty())
    GTEST_SKIP() << "no probe records under reports/data/ yet: run test_probes_nvidia_gpu on an H100 with "
                    "FLASHPROBE_RECORD_DIR set and commit the probe-*.json files";
  const auto declared = flashprobe::read_json_file(
      (fs::path(FLASHPROBE_SOURCE_DIR) / "probes" / "nvidia" / "wmma_declared.json").string());
  const auto bad = replay(records, declared);
  for (const auto& b : bad) ADD_FAILURE() << b;
}

// The replay itself, on synthetic records: a faithful ldmatrix record passes, a planted one-slot
// change and an undeclared wmma record are each reported.
TEST(Replay, ReportsAPlantedDifferenceAndAnUndeclaredWmmaAtom) {
  const auto dir = fs::temp_directory_path() / ("fp_replay_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nlohmann::json at = nlohmann::json::array();
  for (int l = 0; l < 32; ++l)
    for (int s = 0; s < 2; ++s) {
      const auto w = flashprobe::nvidia::ptx::ldmatrix(false, l, s);
      at.push_back({w.row, w.col});
    }
  auto rec = [&](const nlohmann::json& table, const std::string& family, const std::string& atom) {
    return nlohmann::json{{"source", "hardware"}, {"family", family}, {"atom", atom},
                          {"operands", {{{"name", "M"}, {"lanes", 32}, {"slots", 2}, {"rows", 8}, {"cols", 8},
                                         {"at", table}, {"anomalies", nlohmann::json::array()}}}}};
  };
  flashprobe::write_json_file((dir / "probe-good.json").string(), rec(at, "ldmatrix", "SM75_LDMATRIX_X1_B16"));
  EXPECT_TRUE(replay({dir / "probe-good.json"}, nlohmann::json::object()).empty());
  auto planted = at;
  planted[5 * 2 + 1] = {7, 7};
  flashprobe::write_json_file((dir / "probe-bad.json").string(), rec(planted, "ldmatrix", "SM75_LDMATRIX_X1_B16"));
  const auto bad = replay({dir / "probe-bad.json"}, nlohmann::json::object());
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("lane 5 slot 1"), std::string::npos) << bad[0];
  flashprobe::write_json_file((dir / "probe-wmma.json").string(), rec(at, "wmma", "SM80_WMMA_16x16x16_F32F16F16F32_TN"));
  const auto undeclared = replay({dir / "probe-wmma.json"}, nlohmann::json::object());
  ASSERT_EQ(undeclared.size(), 1u);
  EXPECT_NE(undeclared[0].find("no declared wmma layout"), std::string::npos);
  nlohmann::json declared;
  declared["SM80_WMMA_16x16x16_F32F16F16F32_TN"]["M"] = at;
  EXPECT_TRUE(replay({dir / "probe-wmma.json"}, declared).empty());
  fs::remove_all(dir);
}

}  // namespace
