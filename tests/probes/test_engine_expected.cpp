// Every documented layout, simulated, is recovered exactly by the engine: same table, same replica
// and ignored sets, same formula, verdict "matches", all checks green, in a handful of calls.
#include <gtest/gtest.h>

#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/simulated.h"

using namespace flashprobe::probes;

namespace {
struct Case {
  std::string atom;
  ReplicaRule rule;
};
std::vector<Case> cases() {
  std::vector<Case> v;
  for (const AtomDesc& a : mma_atoms()) {
    if (!a.expected) continue;
    v.push_back({a.name, ReplicaRule::poison});
    if (!a.expected->a.injective() || !a.expected->b.injective()) v.push_back({a.name, ReplicaRule::partial});
  }
  return v;
}
}  // namespace

class Expected : public ::testing::TestWithParam<Case> {};

TEST_P(Expected, SimulatedAtomIsRecoveredExactly) {
  const AtomDesc& atom = *find_mma_atom(GetParam().atom);
  SimulatedExecutor sim(atom, *atom.expected, GetParam().rule);
  const ProbeResult r = probe(atom, sim);
  EXPECT_EQ(r.verdict, Verdict::matches) << report(r, false);
  EXPECT_TRUE(r.labels_from_expected);
  EXPECT_TRUE(r.checks_ok()) << report(r, false);
  EXPECT_TRUE(r.anomalies.empty()) << report(r, false);
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.derived, *atom.expected) << format_diff(diff(*atom.expected, r.derived));
  for (Operand op : {Operand::A, Operand::B, Operand::C}) {
    EXPECT_EQ(r.derived.operand(op).replica_groups(), atom.expected->operand(op).replica_groups());
    EXPECT_EQ(r.derived.operand(op).ignored(), atom.expected->operand(op).ignored());
    EXPECT_EQ(formula(r.derived.operand(op)).text(), formula(atom.expected->operand(op)).text());
  }
  EXPECT_EQ(r.source, "simulated");
  // Batching: 3 calls without replicas (singles, k matching, verification); replicas add the
  // partner search (1-2 calls) and the group confirmation (1); wgmma's big D splits P1 by memory.
  const bool replicated = !atom.expected->a.injective() || !atom.expected->b.injective();
  if (atom.wave <= 64) {
    EXPECT_LE(r.executor_calls, replicated ? 6 : 3) << r.executor_calls;
  }
}

INSTANTIATE_TEST_SUITE_P(AllDocumented, Expected, ::testing::ValuesIn(cases()),
                         [](const auto& test) {
                           return test.param.atom + (test.param.rule == ReplicaRule::poison ? "_poison" : "_partial");
                         });

TEST(Engine, WithoutAnExpectedLayoutLabelsAreCanonical) {
  AtomDesc atom = *find_mma_atom("SM80_16x8x16_F32F16F16F32_TN");
  const MmaLayout truth = *atom.expected;
  atom.expected.reset();
  SimulatedExecutor sim(atom, truth);
  const ProbeResult r = probe(atom, sim);
  EXPECT_EQ(r.verdict, Verdict::no_expected);
  EXPECT_FALSE(r.labels_from_expected);
  EXPECT_TRUE(r.ok()) << report(r, false);
  // Canonical: rows and k numbered by first appearance scanning A lane-major, columns scanning B.
  EXPECT_EQ(r.derived.a.at(0, 0), (Coord{0, 0}));
  EXPECT_EQ(r.derived.a.at(0, 1), (Coord{0, 1}));
  EXPECT_EQ(r.derived.a.at(0, 2), (Coord{1, 0}));  // truth row 8 (the second row seen), k 0
  EXPECT_EQ(r.derived.b.at(0, 0).col, 0);
  EXPECT_EQ(r.derived.b.at(4, 0).col, 1);
  // Same structure as the truth: equal up to relabelling, so the formulas have the same shape.
  EXPECT_TRUE(formula(r.derived.c).linear);
}

TEST(Engine, SmallBatchesOnlyCostMoreCalls) {
  const AtomDesc& atom = *find_mma_atom("CDNA_MFMA_16x16x16_F32F16");
  struct Limited : SimulatedExecutor {
    using SimulatedExecutor::SimulatedExecutor;
    int max_batch() const override { return 100; }
  } sim(atom, *atom.expected);
  const ProbeResult r = probe(atom, sim);
  EXPECT_TRUE(r.ok()) << report(r, false);
  // 2 + 64*4 + 64*4 singles, 256 k-matching experiments and 4 verification ones, 100 per call.
  EXPECT_EQ(r.experiments, 2 + 256 + 256 + 256 + 4);
  EXPECT_EQ(r.executor_calls, 6 + 3 + 1);
}
