// Replays probe records measured on real hardware (reports/data/**/probe-*.json, written by
// test_probes_nvidia_gpu on an H100 with FLASHPROBE_RECORD_DIR set) against the declared layouts:
// the PTX ISA figures for mma.sync, ldmatrix and wgmma; for wmma, which NVIDIA leaves unspecified,
// the declared layout is the committed table probes/nvidia/wmma_declared.json ("what the H100
// showed", filled from the records by probes/nvidia/fill_wmma_declared.py). With no records the
// test skips and says so; a wmma record without a declared entry fails, naming the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "flashprobe/core/record.h"
#include "ptx_expected.h"

namespace fs = std::filesystem;
using flashprobe::nvidia::ptx::RC;

namespace {

std::vector<fs::path> probe_records() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(FLASHPROBE_SOURCE_DIR) / "reports" / "data";
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

TEST(Replay, RecordedHardwareLayoutsEqualTheDeclaredLayouts) {
  const auto records = probe_records();
  if (records.empty())
    GTEST_SKIP() << "no probe records under reports/data/ yet: run test_probes_nvidia_gpu on an H100 with "
                    "FLASHPROBE_RECORD_DIR set and commit the probe-*.json files";
  const fs::path declared_path = fs::path(FLASHPROBE_SOURCE_DIR) / "probes" / "nvidia" / "wmma_declared.json";
  const auto wmma_declared = flashprobe::read_json_file(declared_path.string());
  int compared = 0;
  for (const auto& path : records) {
    SCOPED_TRACE(path.string());
    const auto j = flashprobe::read_json_file(path.string());
    ASSERT_EQ(j.value("source", ""), "hardware");
    const std::string family = j.at("family"), atom = j.at("atom");
    for (const auto& op : j.at("operands")) {
      const std::string opname = op.at("name");
      const int lanes = op.at("lanes"), slots = op.at("slots");
      const auto& at = op.at("at");
      ASSERT_EQ(at.size(), static_cast<std::size_t>(lanes) * slots) << atom << " " << opname;
      EXPECT_TRUE(op.at("anomalies").empty()) << atom << " " << opname << " recorded anomalies";
      if (family == "ldmatrix") {
        const bool trans = atom.find("_T") != std::string::npos;
        for (int l = 0; l < lanes; ++l)
          for (int s = 0; s < slots; ++s) {
            const auto w = flashprobe::nvidia::ptx::ldmatrix(trans, l, s);
            EXPECT_EQ(at[l * slots + s], nlohmann::json({w.row, w.col})) << atom << " lane " << l << " slot " << s;
          }
      } else if (family == "wmma") {
        ASSERT_TRUE(wmma_declared.contains(atom) && wmma_declared[atom].contains(opname))
            << atom << " " << opname << ": no declared wmma layout in " << declared_path
            << "; fill it from the H100 records with probes/nvidia/fill_wmma_declared.py";
        EXPECT_EQ(at, wmma_declared[atom][opname]) << atom << " " << opname << ": record differs from the declared layout";
      } else {
        const auto f = documented(family, atom, opname);
        ASSERT_NE(f, nullptr) << "unknown family " << family;
        for (int l = 0; l < lanes; ++l)
          for (int s = 0; s < slots; ++s) {
            const auto w = f(l, s);
            EXPECT_EQ(at[l * slots + s], nlohmann::json({w.row, w.col})) << atom << " " << opname << " lane " << l
                                                                         << " slot " << s;
          }
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 0) << "records were present but held no operands";
}

}  // namespace
