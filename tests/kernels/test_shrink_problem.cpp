// The greedy problem shrinker of the backward mutant hunt (tests/common/shrink_problem.h): every
// candidate is valid and simpler, and a planted failure condition shrinks to the smallest problem
// that still meets it, with everything it does not need dropped.
#include <gtest/gtest.h>

#include "../common/shrink_problem.h"

namespace flashprobe::testing {
namespace {

AttnProblem rich() {
  AttnProblem p;
  p.batch = 3; p.hq = 8; p.hkv = 2; p.sq = 40; p.sk = 53; p.d = 128; p.dv = 96;
  p.causal = Causal::bottom_right;
  p.window_left = 5; p.window_right = 2; p.softcap = 2; p.scale = 0.3;
  for (int h = 0; h < p.hq; ++h) p.alibi_slopes.push_back(0.5);
  p.seqlens_k = {53, 20, 7};
  p.with_layout(TensorLayout::bhsd);
  return p;
}

TEST(ShrinkProblem, CandidatesAreValidAndDifferent) {
  const AttnProblem p = rich();
  const auto c = smaller_problems(p);
  EXPECT_GT(c.size(), 10u);
  for (const AttnProblem& s : c) {
    EXPECT_FALSE(has_errors(problem_errors(s))) << s.id();
    EXPECT_FALSE(s == p);
  }
}

TEST(ShrinkProblem, APlantedConditionShrinksToItsSmallestProblem) {
  // "Fails" when causal, grouped (hq > hkv) and sk not a multiple of 8.
  auto fails = [](const AttnProblem& p) { return p.causal != Causal::none && p.hq > p.hkv && p.sk % 8 != 0; };
  const Shrunk s = shrink_problem(rich(), fails);
  EXPECT_TRUE(fails(s.p));
  EXPECT_EQ(s.p.batch, 1);
  EXPECT_EQ(s.p.hkv, 1);
  EXPECT_EQ(s.p.hq, 2);
  EXPECT_EQ(s.p.sq, 1);
  EXPECT_EQ(s.p.sk, 1);
  EXPECT_EQ(s.p.d, 8);
  EXPECT_EQ(s.p.dv, 8);
  EXPECT_EQ(s.p.causal, Causal::bottom_right);
  EXPECT_TRUE(s.p.seqlens_k.empty() && s.p.alibi_slopes.empty());
  EXPECT_EQ(s.p.softcap, 0);
  EXPECT_EQ(s.p.window_left, -1);
  EXPECT_TRUE(s.p.q.is_zero() && s.p.k.is_zero());
  EXPECT_GT(s.steps, 5);
}

TEST(ShrinkProblem, StopsWithinItsBudgetAndKeepsTheLastFailure) {
  int calls = 0;
  const Shrunk s = shrink_problem(rich(), [&](const AttnProblem& p) { ++calls; return p.sq > 20; }, 7);
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(s.tries, 7);
  EXPECT_GT(s.p.sq, 20);
}

TEST(ShrinkProblem, NothingFailsNothingShrinks) {
  const Shrunk s = shrink_problem(rich(), [](const AttnProblem&) { return false; });
  EXPECT_EQ(s.steps, 0);
  EXPECT_TRUE(s.p == rich());
}

}  // namespace
}  // namespace flashprobe::testing
