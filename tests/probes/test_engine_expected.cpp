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
  // Batching: 3 calls without replicas (packed singles, k matching, verification); replicas add the
  // packs re-run as singles (1), the partner search (1-2 calls) and the group confirmation (1).
  const bool replicated = !atom.expected->a.injective() || !atom.expected->b.injective();
  EXPECT_LE(r.executor_calls, replicated ? 7 : 3) << r.executor_calls;
  EXPECT_EQ(r.packs_rerun > 0, replicated) << r.packs_rerun;
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
    int max_batch() const override { return 10; }
  } sim(atom, *atom.expected);
  const ProbeResult r = probe(atom, sim);
  EXPECT_TRUE(r.ok()) << report(r, false);
  // P1: 2 + 17 packs of A's 64*4 slots + 17 of B's (16 f16 members each, an odd pack count);
  // P3: K = 16 k-matching experiments (one A element per row each); 4 verification ones. 10 per call.
  EXPECT_EQ(r.experiments, 2 + 17 + 17 + 16 + 4);
  EXPECT_EQ(r.executor_calls, 4 + 2 + 1);
  EXPECT_EQ(r.packs_rerun, 0);
}

// Issue #5: the widest wgmma spent most of `probe --all` on 6150 experiments of 16384 D values. Packed
// singles and k matching bring it to 2 + 65 A packs (1024 slots / 16, odd) + 257 B packs (4096 / 16,
// odd) + K = 16 k-matching experiments + 4 verification ones = 344, in 3 calls (one per phase).
TEST(Engine, WidestWgmmaNeedsFewExperiments) {
  const AtomDesc& atom = *find_mma_atom("SM90_64x256x16_F32F16F16_RS");
  SimulatedExecutor sim(atom, *atom.expected, ReplicaRule::poison);
  const ProbeResult r = probe(atom, sim);
  EXPECT_TRUE(r.ok()) << report(r, false);
  ASSERT_EQ(r.derived, *atom.expected) << format_diff(diff(*atom.expected, r.derived));
  EXPECT_LT(r.experiments, 1000);
  EXPECT_EQ(r.experiments, 2 + 65 + 257 + 16 + 4);
  EXPECT_EQ(r.executor_calls, 3);
  EXPECT_EQ(r.packs_rerun, 0);
}

// RDNA3 wave32: lanes 16..31 must repeat lanes 0..15, so every pack holds a lone copy and must fall
// back to singles; the singles then classify the replicas exactly as without packing.
TEST(Engine, Rdna3PacksFallBackToSinglesAndTheLayoutIsUnchanged) {
  const AtomDesc& atom = *find_mma_atom("GFX11_WMMA_16x16x16_F32F16_W32");
  for (ReplicaRule rule : {ReplicaRule::partial, ReplicaRule::poison}) {
    SimulatedExecutor sim(atom, *atom.expected, rule);
    const ProbeResult r = probe(atom, sim);
    EXPECT_TRUE(r.ok()) << report(r, false);
    EXPECT_TRUE(r.anomalies.empty()) << report(r, false);
    ASSERT_EQ(r.derived, *atom.expected) << format_diff(diff(*atom.expected, r.derived));
    EXPECT_EQ(r.derived.a.replica_groups(), atom.expected->a.replica_groups());
    EXPECT_EQ(r.derived.b.replica_groups(), atom.expected->b.replica_groups());
    // 512 A slots and 512 B slots, 16 per pack: 33 packs each (odd), all re-run as 1024 singles.
    EXPECT_EQ(r.packs_rerun, 33 + 33) << replica_rule_name(rule);
    EXPECT_GE(r.experiments, 2 + 66 + 1024) << replica_rule_name(rule);
  }
}
