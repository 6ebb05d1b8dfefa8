// Properties of the engine on random simulated atoms: whatever the layout -- GF(2)-linear or an
// arbitrary permutation, replicated along lane bits, with ignored lanes or slots, M/N/K among
// 8/16/32/64, wave 32 or 64 -- it is recovered exactly; a planted change is named slot by slot;
// printed formulas evaluate back to the table. Budgets: RC_PARAMS (default max_success=30 here).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>

#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/formula.h"
#include "flashprobe/probes/simulated.h"
#include "layout_gen.h"

using namespace flashprobe::probes;

namespace {
// CI budget unless the caller sets RC_PARAMS (e.g. RC_PARAMS="max_success=1000" for a soak).
const bool kBudget = (setenv("RC_PARAMS", "max_success=30", 0), true);

struct Shape {
  int m, n, k, wave;
};
rc::Gen<Shape> shapes() {
  // Every dimension from {8, 16, 32, 64}; the product is capped so the CPU suite stays fast.
  return rc::gen::suchThat(
      rc::gen::construct<Shape>(rc::gen::element(8, 16, 32, 64), rc::gen::element(8, 16, 32, 64),
                                rc::gen::element(8, 16, 32, 64), rc::gen::element(32, 64)),
      [](const Shape& s) { return s.m * s.n * s.k <= 32768; });
}

void check_recovered(const fp_test::RandomAtom& ra, ReplicaRule rule) {
  const AtomDesc& atom = ra.atom;
  SimulatedExecutor sim(atom, *atom.expected, rule);
  const ProbeResult r = probe(atom, sim);
  RC_ASSERT(r.verdict == Verdict::matches);
  RC_ASSERT(r.checks_ok());
  RC_ASSERT(r.anomalies.empty());
  RC_ASSERT(r.derived == *atom.expected);
}
}  // namespace

RC_GTEST_PROP(EngineProps, RandomLinearLayoutsAreRecovered, ()) {
  const auto s = *shapes();
  const int rep_a = *rc::gen::inRange(0, 3), rep_b = *rc::gen::inRange(0, 3);
  // Ignored lanes or every-other slots keep the map linear (mode 3, random slots, would not).
  const int ign_a = *rc::gen::inRange(0, 3), ign_b = *rc::gen::inRange(0, 3), ign_c = *rc::gen::inRange(0, 3);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto ra = fp_test::random_atom(seed, s.m, s.n, s.k, s.wave, true, rep_a, rep_b, ign_a, ign_b, ign_c);
  RC_TAG(rep_a + rep_b > 0 ? "replicated" : "not replicated");
  RC_CLASSIFY(ign_a + ign_b + ign_c > 0, "ignored slots or lanes");
  RC_LOG() << ra.summary << "\n";
  check_recovered(ra, ReplicaRule::poison);
  for (Operand op : {Operand::A, Operand::B, Operand::C}) RC_ASSERT(formula(ra.atom.expected->operand(op)).linear);
}

RC_GTEST_PROP(EngineProps, RandomPermutationsAreRecovered, ()) {
  const auto s = *shapes();
  const int rep_a = *rc::gen::inRange(0, 3), rep_b = *rc::gen::inRange(0, 3);
  const int ign_a = *rc::gen::inRange(0, 4), ign_b = *rc::gen::inRange(0, 4), ign_c = *rc::gen::inRange(0, 4);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto ra = fp_test::random_atom(seed, s.m, s.n, s.k, s.wave, false, rep_a, rep_b, ign_a, ign_b, ign_c);
  RC_TAG(rep_a + rep_b > 0 ? "replicated" : "not replicated");
  RC_LOG() << ra.summary << "\n";
  check_recovered(ra, ReplicaRule::poison);
}

RC_GTEST_PROP(EngineProps, PartialReplicasAreRecoveredWithTheExpectedLayout, ()) {
  // Copies that each feed part of the result: the groupings semantics allows are told apart by the
  // grid check and the expected layout (see engine.h). Smaller shapes: the search is wider.
  const int m = *rc::gen::element(8, 16), n = *rc::gen::element(8, 16), k = *rc::gen::element(8, 16, 32);
  const int wave = *rc::gen::element(32, 64);
  const int rep_a = *rc::gen::inRange(0, 2), rep_b = *rc::gen::inRange(0, 2);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto ra = fp_test::random_atom(seed, m, n, k, wave, *rc::gen::arbitrary<bool>(), rep_a, rep_b, 0, 0, 0);
  RC_LOG() << ra.summary << "\n";
  check_recovered(ra, ReplicaRule::partial);
}

RC_GTEST_PROP(EngineProps, APlantedChangeIsNamedSlotBySlot, ()) {
  const auto s = *shapes();
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  auto ra = fp_test::random_atom(seed, s.m, s.n, s.k, s.wave, *rc::gen::arbitrary<bool>(), 0, 0, 0, 0, 0);
  const MmaLayout& truth = *ra.atom.expected;
  MmaLayout hw = truth;
  const Operand op = *rc::gen::element(Operand::A, Operand::B, Operand::C);
  OperandLayout& l = hw.operand(op);
  const int p = *rc::gen::inRange(0, l.size());
  std::vector<int> planted{p};
  if (op != Operand::C && *rc::gen::arbitrary<bool>()) {
    l.set_flat(p, kIgnored);  // the hardware does not read this slot
  } else {
    int q = *rc::gen::inRange(0, l.size());
    RC_PRE(q != p);
    const Coord x = l.at_flat(p), y = l.at_flat(q);
    l.set_flat(p, y);
    l.set_flat(q, x);  // two slots swap their elements
    planted = {std::min(p, q), std::max(p, q)};
  }
  RC_LOG() << ra.summary << " planted in " << operand_name(op) << "\n";
  SimulatedExecutor sim(ra.atom, hw, ReplicaRule::poison);
  const ProbeResult r = probe(ra.atom, sim);
  RC_ASSERT(r.verdict == Verdict::differs);
  std::vector<int> named;
  for (const auto& d : r.diff) {
    RC_ASSERT(d.op == op);
    named.push_back(l.flat(d.lane, d.slot));
  }
  RC_ASSERT(named == planted);
}

RC_GTEST_PROP(EngineProps, PrintedFormulasEvaluateToTheTable, ()) {
  const auto s = *shapes();
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  std::mt19937_64 rng(seed);
  const auto l = fp_test::random_operand(rng, s.m, s.k, s.wave, {true, *rc::gen::inRange(0, 3), *rc::gen::inRange(0, 3)});
  const Formula f = formula(l);
  RC_ASSERT(f.linear);
  for (int lane = 0; lane < l.lanes(); ++lane)
    for (int slot = 0; slot < l.slots(); ++slot) {
      const Coord c = l.at(lane, slot);
      if (c.ignored()) continue;
      RC_ASSERT(eval_expr(f.row, lane, slot) == c.row);
      RC_ASSERT(eval_expr(f.col, lane, slot) == c.col);
    }
}
