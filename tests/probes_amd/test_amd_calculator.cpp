// Every AMD atom's declared layout (flashprobe/atoms/amd_layout.h, through the probe registry)
// against AMD's Matrix Instruction Calculator, slot for slot: A, B, C and D of the instruction behind
// each atom, for every architecture that spells it (CDNA1/2/3). The calculator's tables are kept as
// documented reference data with their provenance (repository, commit, the command of every table)
// in reports/data/amd-documented/2026-11-26-calculator/, made by tools/amd_calculator_reference.py.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/layout.h"

namespace {
namespace pr = flashprobe::probes;

const char* kReference = FLASHPROBE_SOURCE_DIR "/reports/data/amd-documented/2026-11-26-calculator/layouts.json";

const nlohmann::json& reference() {
  static const nlohmann::json j = [] {
    std::ifstream f(kReference);
    if (!f) throw std::runtime_error(std::string("cannot read ") + kReference);
    return nlohmann::json::parse(f);
  }();
  return j;
}

// The calculator's [lane][slot] table as a layout of the expected operand's shape; nullopt (with
// the reason in `why`) when the shape differs.
std::optional<pr::OperandLayout> table_of(const nlohmann::json& t, const pr::OperandLayout& shape, std::string& why) {
  if (static_cast<int>(t.size()) != shape.lanes()) {
    why = std::to_string(t.size()) + " lanes, the atom has " + std::to_string(shape.lanes());
    return std::nullopt;
  }
  pr::OperandLayout l(shape.rows(), shape.cols(), shape.lanes(), shape.slots());
  for (int lane = 0; lane < shape.lanes(); ++lane) {
    const auto& row = t[static_cast<std::size_t>(lane)];
    if (static_cast<int>(row.size()) > shape.slots()) {
      why = "lane " + std::to_string(lane) + " has " + std::to_string(row.size()) + " slots, the atom " +
            std::to_string(shape.slots());
      return std::nullopt;
    }
    // Slots past the calculator's last register column hold nothing (the OPSEL-low tables end early).
    for (int s = 0; s < shape.slots(); ++s) {
      const auto& e = s < static_cast<int>(row.size()) ? row[static_cast<std::size_t>(s)] : nlohmann::json();
      l.set(lane, s, e.is_null() ? pr::kIgnored : pr::Coord{e[0].get<int>(), e[1].get<int>()});
    }
  }
  return l;
}

std::string provenance() {
  const auto& c = reference()["calculator"];
  return c["repository"].get<std::string>() + " @ " + c["commit"].get<std::string>();
}

}  // namespace

TEST(AmdCalculator, ReferenceCarriesItsProvenance) {
  const auto& r = reference();
  EXPECT_EQ(r["schema"], "flashprobe.amd_calculator/1");
  EXPECT_EQ(r["evidence"], "documented");
  EXPECT_EQ(r["calculator"]["repository"], "https://github.com/ROCm/amd_matrix_instruction_calculator");
  EXPECT_EQ(r["calculator"]["commit"].get<std::string>().size(), 40u);
  for (const auto& a : r["atoms"])
    for (const auto& s : a["sources"])
      for (const char* m : {"A", "B", "C", "D"})
        EXPECT_EQ(s["operands"][m]["command"].get<std::string>().rfind("python3 matrix_calculator.py -a ", 0), 0u)
            << a["atom"] << " " << m;
}

TEST(AmdCalculator, EveryAmdAtomMatchesEverySlot) {
  std::set<std::string> referenced;
  for (const auto& a : reference()["atoms"]) referenced.insert(a["atom"].get<std::string>());
  int atoms = 0, tables = 0;
  long slots = 0;
  for (const auto& atom : pr::mma_atoms()) {
    if (atom.vendor != pr::Vendor::amd) continue;
    SCOPED_TRACE(atom.name);
    ++atoms;
    ASSERT_TRUE(atom.expected.has_value());
    ASSERT_TRUE(referenced.count(atom.name)) << atom.name << " has no calculator reference: add it to "
                                                "tools/amd_calculator_reference.py and regenerate";
    for (const auto& a : reference()["atoms"]) {
      if (a["atom"] != atom.name) continue;
      for (const auto& src : a["sources"]) {
        const std::string what = src["architecture"].get<std::string>() + " " + src["instruction"].get<std::string>();
        SCOPED_TRACE(what);
        const auto& ops = src["operands"];
        std::string why;
        const pr::MmaLayout& e = *atom.expected;
        auto A = table_of(ops["A"]["table"], e.a, why);
        ASSERT_TRUE(A) << "A: " << why;
        auto B = table_of(ops["B"]["table"], e.b, why);
        ASSERT_TRUE(B) << "B: " << why;
        for (const char* cd : {"C", "D"}) {
          auto C = table_of(ops[cd]["table"], e.c, why);
          ASSERT_TRUE(C) << cd << ": " << why;
          const pr::MmaLayout calc{*A, *B, *C};
          const auto d = pr::diff(e, calc);
          EXPECT_TRUE(d.empty()) << what << " (" << provenance() << ", operand C read as " << cd << "): "
                                 << d.size() << " slots differ\n"
                                 << pr::format_diff(d);
          ++tables;
          slots += e.a.lanes() * (e.a.slots() + e.b.slots() + e.c.slots());
        }
      }
    }
  }
  // gfx11 wave32/64 with OPSEL (12); gfx12 (12: f16, bf16 and the four fp8/bf8 pairings x wave32/64);
  // CDNA (12: f16 and bf16 x 32x32x8/16x16x16, the four fp8/bf8 pairings x 16x16x32/32x32x16)
  EXPECT_GE(atoms, 36);
  RecordProperty("tables", tables);
  RecordProperty("slots", static_cast<int>(slots));
  std::cout << atoms << " AMD atoms, " << tables << " calculator tables, " << slots << " slots compared\n";
}

// The comparison is not vacuous: a declared layout with two k labels swapped in one A slot pair
// differs from the calculator there, and the diff names those slots.
TEST(AmdCalculator, APlantedSwapIsFound) {
  const pr::AtomDesc* atom = pr::find_mma_atom("GFX12_WMMA_16x16x16_F32F16_W32");
  ASSERT_NE(atom, nullptr);
  pr::MmaLayout planted = *atom->expected;
  const pr::Coord x = planted.a.at(16, 0), y = planted.a.at(16, 4);
  planted.a.set(16, 0, y);
  planted.a.set(16, 4, x);
  for (const auto& a : reference()["atoms"]) {
    if (a["atom"] != atom->name) continue;
    std::string why;
    const auto& ops = a["sources"][0]["operands"];
    const pr::MmaLayout calc{*table_of(ops["A"]["table"], planted.a, why), *table_of(ops["B"]["table"], planted.b, why),
                             *table_of(ops["D"]["table"], planted.c, why)};
    const auto d = pr::diff(planted, calc);
    ASSERT_EQ(d.size(), 2u) << pr::format_diff(d);
    EXPECT_EQ(d[0].lane, 16);
    return;
  }
  FAIL() << "no reference for " << atom->name;
}
