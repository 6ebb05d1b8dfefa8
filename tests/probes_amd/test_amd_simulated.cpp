// Simulation: every AMD atom's documented layout, run as a simulated instruction, is
// recovered exactly by the probe engine -- table, ignored slots (OPSEL halves) and replica groups
// (gfx11 A/B lanes 16.. copying 0..15) -- under both replica rules. And the engine is not just
// agreeing with itself: a simulated atom whose hardware differs in one slot is reported as differing.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/simulated.h"

namespace fp = flashprobe::probes;

namespace {
std::vector<const fp::AtomDesc*> amd_atoms() {
  std::vector<const fp::AtomDesc*> v;
  for (const auto& a : fp::mma_atoms())
    if (a.vendor == fp::Vendor::amd) v.push_back(&a);
  return v;
}

class AmdSimulated : public ::testing::TestWithParam<std::pair<const fp::AtomDesc*, fp::ReplicaRule>> {};

TEST_P(AmdSimulated, DocumentedLayoutIsRecoveredExactly) {
  const auto& [atom, rule] = GetParam();
  ASSERT_TRUE(atom->expected.has_value());
  const fp::MmaLayout& want = *atom->expected;
  fp::SimulatedExecutor sim(*atom, want, rule);
  const fp::ProbeResult r = fp::probe(*atom, sim);
  EXPECT_EQ(r.source, "simulated") << "a simulated result must never be labelled hardware";
  EXPECT_TRUE(r.ok()) << fp::report(r, false);
  EXPECT_EQ(r.verdict, fp::Verdict::matches);
  EXPECT_TRUE(r.labels_from_expected);
  EXPECT_TRUE(r.anomalies.empty());
  for (fp::Operand op : {fp::Operand::A, fp::Operand::B, fp::Operand::C}) {
    SCOPED_TRACE(std::string(fp::operand_name(op)));
    EXPECT_EQ(r.derived.operand(op), want.operand(op)) << fp::format_diff(fp::diff(want, r.derived));
    EXPECT_EQ(r.derived.operand(op).replica_groups(), want.operand(op).replica_groups());
    EXPECT_EQ(r.derived.operand(op).ignored(), want.operand(op).ignored());
  }
  // What the documents say, restated so a change to the expected tables is a visible decision:
  const bool gfx11 = atom->name.starts_with("GFX11_");
  const std::size_t copies = gfx11 ? static_cast<std::size_t>(atom->wave / 16) : 1;
  const auto groups = r.derived.a.replica_groups();
  if (gfx11) {
    ASSERT_EQ(groups.size(), static_cast<std::size_t>(atom->m * atom->k)) << "every A element replicated";
    for (const auto& g : groups) EXPECT_EQ(g.size(), copies);
  } else {
    EXPECT_TRUE(groups.empty()) << "gfx12 and CDNA hold every A element once";
  }
  const bool opsel = atom->name.find("_OPSEL_") != std::string::npos;
  EXPECT_EQ(r.derived.c.ignored().size(), opsel ? static_cast<std::size_t>(atom->wave * atom->c_slots / 2) : 0u)
      << "16-bit accumulators: the half OPSEL does not choose is ignored";
}

std::vector<std::pair<const fp::AtomDesc*, fp::ReplicaRule>> cases() {
  std::vector<std::pair<const fp::AtomDesc*, fp::ReplicaRule>> v;
  for (auto* a : amd_atoms())
    for (auto rule : {fp::ReplicaRule::partial, fp::ReplicaRule::poison}) v.emplace_back(a, rule);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, AmdSimulated, ::testing::ValuesIn(cases()), [](const auto& p) {
  return p.param.first->name + "_" + std::string(fp::replica_rule_name(p.param.second));
});

// The simulated "hardware" swaps two C slots of lane 0 relative to the document: the engine must
// say the layouts differ and name those slots, for every AMD family.
TEST(AmdSimulatedDiffers, SwappedAccumulatorSlotsAreReported) {
  for (const char* name : {"GFX11_WMMA_16x16x16_F32F16_W32", "GFX12_WMMA_16x16x16_F32F16_W32", "CDNA_MFMA_32x32x8_F32F16"}) {
    SCOPED_TRACE(name);
    const fp::AtomDesc* atom = fp::find_mma_atom(name);
    ASSERT_NE(atom, nullptr);
    fp::MmaLayout hw = *atom->expected;
    const fp::Coord c0 = hw.c.at(0, 0), c1 = hw.c.at(0, 1);
    hw.c.set(0, 0, c1);
    hw.c.set(0, 1, c0);
    fp::SimulatedExecutor sim(*atom, hw);
    const fp::ProbeResult r = fp::probe(*atom, sim);
    EXPECT_EQ(r.verdict, fp::Verdict::differs) << fp::report(r, false);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.derived.c, hw.c) << "the engine derives what the simulated hardware does";
    bool named = false;
    for (const auto& d : r.diff) named |= d.op == fp::Operand::C && d.lane == 0 && (d.slot == 0 || d.slot == 1);
    EXPECT_TRUE(named) << fp::format_diff(r.diff);
  }
}
}  // namespace
