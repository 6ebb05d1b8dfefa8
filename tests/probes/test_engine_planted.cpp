// Planted faults: a simulated atom that differs from the documented layout in one slot is reported
// as a diff naming that slot; results that are not one of the expected sums are anomalies.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/simulated.h"
#include "layout_gen.h"

using namespace flashprobe::probes;

namespace {
ProbeResult probe_planted(const char* name, const std::function<void(MmaLayout&)>& plant,
                          ReplicaRule rule = ReplicaRule::poison) {
  const AtomDesc& atom = *find_mma_atom(name);
  MmaLayout hw = *atom.expected;
  plant(hw);
  SimulatedExecutor sim(atom, hw, rule);
  return probe(atom, sim);
}
std::vector<std::tuple<Operand, int, int>> slots_of(const std::vector<SlotDiff>& d) {
  std::vector<std::tuple<Operand, int, int>> v;
  for (auto& x : d) v.emplace_back(x.op, x.lane, x.slot);
  return v;
}
}  // namespace

TEST(Planted, AnIgnoredASlotIsNamed) {
  const auto r = probe_planted("SM80_16x8x16_F32F16F16F32_TN", [](MmaLayout& l) { l.a.set(5, 2, kIgnored); });
  EXPECT_EQ(r.verdict, Verdict::differs) << report(r, false);
  ASSERT_EQ(slots_of(r.diff), (std::vector<std::tuple<Operand, int, int>>{{Operand::A, 5, 2}})) << format_diff(r.diff);
  EXPECT_TRUE(r.diff[0].derived.ignored());
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.checks_ok());  // (m, k) of that slot is held by nobody
}

TEST(Planted, TwoSwappedBSlotsAreNamed) {
  const auto r = probe_planted("CDNA_MFMA_32x32x8_F32F16", [](MmaLayout& l) {
    const Coord x = l.b.at(3, 1), y = l.b.at(40, 2);
    l.b.set(3, 1, y);
    l.b.set(40, 2, x);
  });
  EXPECT_EQ(r.verdict, Verdict::differs) << report(r, false);
  EXPECT_EQ(slots_of(r.diff), (std::vector<std::tuple<Operand, int, int>>{{Operand::B, 3, 1}, {Operand::B, 40, 2}}))
      << format_diff(r.diff);
  EXPECT_TRUE(r.checks_ok()) << report(r, false);  // still a consistent instruction, just not the documented one
}

TEST(Planted, TwoSwappedAccumulatorSlotsAreNamed) {
  const auto r = probe_planted("GFX12_WMMA_16x16x16_F32F16_W32", [](MmaLayout& l) {
    const Coord x = l.c.at(7, 0), y = l.c.at(20, 5);
    l.c.set(7, 0, y);
    l.c.set(20, 5, x);
  });
  EXPECT_EQ(r.verdict, Verdict::differs);
  EXPECT_EQ(slots_of(r.diff), (std::vector<std::tuple<Operand, int, int>>{{Operand::C, 7, 0}, {Operand::C, 20, 5}}))
      << format_diff(r.diff);
}

TEST(Planted, AMissingReplicaIsNamedOnRdna3) {
  // Lane 20 no longer holds its copy of lane 4's A row (slot 3): the rest still replicates.
  const auto r = probe_planted("GFX11_WMMA_16x16x16_F32F16_W32", [](MmaLayout& l) { l.a.set(20, 3, kIgnored); });
  EXPECT_EQ(r.verdict, Verdict::differs) << report(r, false);
  EXPECT_EQ(slots_of(r.diff), (std::vector<std::tuple<Operand, int, int>>{{Operand::A, 20, 3}})) << format_diff(r.diff);
}

TEST(Simulated, DisagreeingReplicasGiveWrongResults) {
  const AtomDesc& atom = *find_mma_atom("GFX11_WMMA_16x16x16_F32F16_W32");
  for (ReplicaRule rule : {ReplicaRule::partial, ReplicaRule::poison}) {
    SimulatedExecutor sim(atom, *atom.expected, rule);
    FragmentBatch batch(atom, 2);
    // Experiment 0: A row 0 k 0 set in lane 0 only (lane 16 disagrees); experiment 1: in both.
    batch.a(0)[0] = 1;
    batch.a(1)[0] = 1;
    batch.a(1)[16 * 16] = 1;
    std::fill(batch.b(0), batch.b(0) + 32 * 16, 1.0);
    std::fill(batch.b(1), batch.b(1) + 32 * 16, 1.0);
    std::vector<double> d;
    sim.run(batch, d);
    int ones0 = 0, ones1 = 0, nans0 = 0;
    for (int i = 0; i < 256; ++i) {
      ones0 += d[static_cast<std::size_t>(i)] == 1;
      nans0 += std::isnan(d[static_cast<std::size_t>(i)]);
      ones1 += d[256 + static_cast<std::size_t>(i)] == 1;
    }
    EXPECT_EQ(ones1, 16) << "agreeing replicas light all of row 0";
    EXPECT_NE(ones0, 16) << "disagreeing replicas must not give the right row";
    if (rule == ReplicaRule::poison) {
      EXPECT_EQ(nans0, 256);
    }
  }
}

TEST(Anomalies, AValueThatIsNoPossibleSumIsReportedNotRounded) {
  const AtomDesc& atom = *find_mma_atom("SM80_16x8x8_F32F16F16F32_TN");
  struct Noisy : SimulatedExecutor {
    using SimulatedExecutor::SimulatedExecutor;
    void run(const FragmentBatch& b, std::vector<double>& d) override {
      SimulatedExecutor::run(b, d);
      if (!done && b.count > 10) {
        d[static_cast<std::size_t>(10 * 32 * 4 + 17)] += 0.5;  // experiment 10, one D slot off by 0.5
        done = true;
      }
    }
    bool done = false;
  } sim(atom, *atom.expected);
  const ProbeResult r = probe(atom, sim);
  EXPECT_FALSE(r.anomalies.empty()) << report(r, false);
  EXPECT_FALSE(r.ok());
}

TEST(Anomalies, APackWhoseValuesDoNotAddUpIsReported) {
  // One D value of the first A pack (experiment 2 of the first call) is changed: by a fraction (no
  // sum of members at all) or by 64 (member 6 gains or loses a D slot). The pack is re-run as
  // singles, which are all clean and whole: exact arithmetic cannot give that pack, so it is named.
  const AtomDesc& atom = *find_mma_atom("SM80_16x8x16_F32F16F16F32_TN");
  for (double delta : {0.5, 64.0}) {
    struct Tampered : SimulatedExecutor {
      Tampered(const AtomDesc& a, double dv) : SimulatedExecutor(a, *a.expected), delta(dv) {}
      void run(const FragmentBatch& b, std::vector<double>& d) override {
        SimulatedExecutor::run(b, d);
        if (first) d[static_cast<std::size_t>(2 * 32 * 4 + 5)] += delta;
        first = false;
      }
      double delta;
      bool first = true;
    } sim(atom, delta);
    const ProbeResult r = probe(atom, sim);
    EXPECT_EQ(r.packs_rerun, 1) << delta;
    ASSERT_EQ(r.anomalies.size(), 1u) << report(r, false);
    EXPECT_NE(r.anomalies[0].find("did not add up"), std::string::npos) << r.anomalies[0];
    EXPECT_EQ(r.derived, *atom.expected) << "the singles still give the layout";
    EXPECT_FALSE(r.ok());
  }
}

TEST(Anomalies, AnIgnoredSlotReadInKMatchingIsReported) {
  // Every other A slot is ignored. P1 (the first call) sees that layout; from the second call on one
  // element has moved from its slot into an ignored one, i.e. the engine called a slot ignored that
  // is read. In the packed k matching that slot carries noise above twice the largest B value, so
  // its row's D values leave the column's values in every experiment.
  const auto ra = fp_test::random_atom(7, 16, 16, 16, 32, true, 0, 0, 1, 0, 0);
  const AtomDesc& atom = ra.atom;
  const MmaLayout& truth = *atom.expected;
  MmaLayout moved = truth;
  int held = -1, spare = -1;
  for (int i = 0; i < truth.a.size(); ++i) (truth.a.at_flat(i).ignored() ? spare : held) = i;
  ASSERT_GE(held, 0);
  ASSERT_GE(spare, 0);
  moved.a.set_flat(spare, truth.a.at_flat(held));
  moved.a.set_flat(held, kIgnored);
  struct Switching : Executor {
    Switching(const AtomDesc& a, const MmaLayout& p1, const MmaLayout& later) : first(a, p1), rest(a, later) {}
    std::string source() const override { return "simulated"; }
    std::string description() const override { return "layout changes after the first call"; }
    void run(const FragmentBatch& b, std::vector<double>& d) override { (calls++ == 0 ? first : rest).run(b, d); }
    SimulatedExecutor first, rest;
    int calls = 0;
  } sim(atom, truth, moved);
  const ProbeResult r = probe(atom, sim);
  EXPECT_EQ(r.packs_rerun, 0) << report(r, false);
  bool named = false;
  for (const auto& a : r.anomalies)
    named = named || (a.find("k matching") != std::string::npos &&
                      a.find("not the value of any B element") != std::string::npos);
  EXPECT_TRUE(named) << report(r, false);
  EXPECT_FALSE(r.ok());
}

TEST(Anomalies, KMatchingNoiseIsLouderThanAnyMatch) {
  // The guarantee behind the test above: in the k matching (the second call here) every ignored A
  // and B slot holds more than twice the largest B value, so a read one can never look like a match.
  const auto ra = fp_test::random_atom(11, 16, 16, 32, 32, true, 0, 0, 1, 1, 0);
  const AtomDesc& atom = ra.atom;
  struct Recording : SimulatedExecutor {
    using SimulatedExecutor::SimulatedExecutor;
    void run(const FragmentBatch& b, std::vector<double>& d) override {
      if (++calls == 2) seen = b;
      SimulatedExecutor::run(b, d);
    }
    int calls = 0;
    FragmentBatch seen;
  } sim(atom, *atom.expected);
  const ProbeResult r = probe(atom, sim);
  ASSERT_TRUE(r.ok()) << report(r, false);
  ASSERT_EQ(sim.seen.count, atom.k);  // one experiment per k: one A element per row in each
  const OperandLayout &la = atom.expected->a, &lb = atom.expected->b;
  for (int e = 0; e < sim.seen.count; ++e) {
    double loudest = 0, quietest_noise = 1e300;
    for (int i = 0; i < lb.size(); ++i)
      if (lb.at_flat(i).ignored()) quietest_noise = std::min(quietest_noise, std::fabs(sim.seen.b(e)[i]));
      else loudest = std::max(loudest, std::fabs(sim.seen.b(e)[i]));
    for (int i = 0; i < la.size(); ++i)
      if (la.at_flat(i).ignored()) quietest_noise = std::min(quietest_noise, std::fabs(sim.seen.a(e)[i]));
    EXPECT_GT(quietest_noise, 2 * loudest) << "experiment " << e;
    EXPECT_GT(loudest, 1);
  }
}

// The absolute k order of A and B is not observable: hardware that permutes k in A and B alike gives
// the same D, so the probe matches the documented layout and its record says the k labels are the
// document's. gfx12 wave32 with k contiguous per lane (a misreading of the ISA) is such a permutation.
TEST(Observability, ASharedKPermutationIsInvisibleAndTheRecordSaysKIsDocumented) {
  const auto r = probe_planted("GFX12_WMMA_16x16x16_F32F16_W32", [](MmaLayout& l) {
    for (int lane = 0; lane < 32; ++lane)
      for (int s = 0; s < 8; ++s) {
        l.a.set(lane, s, Coord{lane % 16, 8 * (lane / 16) + s});
        l.b.set(lane, s, Coord{8 * (lane / 16) + s, lane % 16});
      }
  });
  EXPECT_EQ(r.verdict, Verdict::matches) << report(r, false);
  EXPECT_TRUE(r.diff.empty());
  nlohmann::json j = r;
  EXPECT_EQ(j["observability"]["A"]["k"]["from"], "documented");
  EXPECT_EQ(j["observability"]["B"]["k"]["from"], "documented");
  EXPECT_EQ(j["observability"]["A"]["observed"][0], "row (shared with C/D)");
  EXPECT_EQ(j["observability"]["C"]["observed"][0], "row");
  EXPECT_NE(report(r, false).find("cannot observe the absolute k order"), std::string::npos);
}

// A k permutation of A alone changes D: that the probe does see.
TEST(Observability, APermutationOfKInAAloneIsADifference) {
  const auto r = probe_planted("GFX12_WMMA_16x16x16_F32F16_W32", [](MmaLayout& l) {
    const Coord x = l.a.at(0, 0), y = l.a.at(0, 4);
    l.a.set(0, 0, y);
    l.a.set(0, 4, x);
  });
  EXPECT_NE(r.verdict, Verdict::matches) << report(r, false);
}

TEST(Observability, CanonicalAndLoadPathAnchorsAreNamed) {
  const AtomDesc& atom = *find_mma_atom("GFX12_WMMA_16x16x16_F32F16_W32");
  SimulatedExecutor sim(atom, *atom.expected, ReplicaRule::poison);
  ProbeOptions o;
  o.use_expected_labels = false;
  ProbeResult r = probe(atom, sim, o);
  EXPECT_EQ(k_labels_from(r), "canonical");
  r.labels_from_expected = true;
  r.label_anchor = "the memory path (load_matrix_sync from row-major memory)";
  EXPECT_EQ(k_labels_from(r), "load path");
  EXPECT_NE(observability(r)["B"]["k"]["why"].get<std::string>().find("load_matrix_sync"), std::string::npos);
}
