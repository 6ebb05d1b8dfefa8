// The order in which bench times the kernels of a case (cli/bench/bench_order.h): every row a
// permutation; over any period of consecutive cases each kernel at each position equally often, before
// each other kernel as often as after it, directly after each other kernel equally often; the same case
// index gives the same order; "given" keeps the --kernel order; the interleaved rounds of one case run
// every kernel once per round, each round a row of the design, until each kernel has its repetitions and
// device time (at most the cap); a bad name is a UsageError naming all three.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_order.h"
#include "flashprobe/core/error.h"

namespace fb = flashprobe::bench;

namespace {

TEST(BenchOrder, BalancedOverEveryPeriodOfConsecutiveCases) {
  for (int n = 1; n <= 7; ++n) {
    const int period = fb::kernel_order_period(n);
    EXPECT_EQ(period, n <= 1 ? 1 : n % 2 ? 2 * n : n) << n;
    for (long long start : {0LL, 1LL, 5LL, 1000003LL}) {
      std::map<std::pair<int, int>, int> at, before, after_directly;  // (kernel, position), (a, b)
      for (long long c = start; c < start + period; ++c) {
        const std::vector<int> row = fb::kernel_order(n, c, fb::KernelOrder::balanced);
        ASSERT_EQ(row.size(), static_cast<std::size_t>(n));
        std::vector<int> sorted = row;
        std::sort(sorted.begin(), sorted.end());
        for (int i = 0; i < n; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i) << "not a permutation, n " << n;
        for (int p = 0; p < n; ++p) {
          ++at[{row[static_cast<std::size_t>(p)], p}];
          for (int q = p + 1; q < n; ++q) ++before[{row[static_cast<std::size_t>(p)], row[static_cast<std::size_t>(q)]}];
          if (p > 0) ++after_directly[{row[static_cast<std::size_t>(p - 1)], row[static_cast<std::size_t>(p)]}];
        }
      }
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          const int at_b = at[std::pair{a, b}], first = before[std::pair{a, b}], next = after_directly[std::pair{a, b}];
          EXPECT_EQ(at_b, period / n) << "kernel " << a << " at position " << b << ", n " << n << ", from case " << start;
          if (a == b) continue;
          EXPECT_EQ(first, period / 2) << a << " before " << b << ", n " << n;
          EXPECT_EQ(next, period / n) << b << " directly after " << a << ", n " << n;
        }
    }
  }
}

TEST(BenchOrder, TheSameCaseIndexGivesTheSameOrder) {
  for (long long c : {0LL, 3LL, 17LL})
    EXPECT_EQ(fb::kernel_order(3, c, fb::KernelOrder::balanced), fb::kernel_order(3, c + 6, fb::KernelOrder::balanced));
  // Two kernels alternate: neither is timed first twice in a row.
  EXPECT_EQ(fb::kernel_order(2, 0, fb::KernelOrder::balanced), (std::vector<int>{0, 1}));
  EXPECT_EQ(fb::kernel_order(2, 1, fb::KernelOrder::balanced), (std::vector<int>{1, 0}));
}

TEST(BenchOrder, GivenKeepsTheKernelOrderForEveryCase) {
  for (long long c : {0LL, 1LL, 2LL, 99LL}) EXPECT_EQ(fb::kernel_order(4, c, fb::KernelOrder::given), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(fb::kernel_order(0, 5, fb::KernelOrder::balanced).empty());
}

TEST(BenchOrder, NamesRoundTripAndABadOneIsAUsageError) {
  for (fb::KernelOrder o : {fb::KernelOrder::given, fb::KernelOrder::balanced, fb::KernelOrder::interleaved})
    EXPECT_EQ(fb::parse_kernel_order(fb::kernel_order_name(o)), o);
  try {
    fb::parse_kernel_order("random");
    FAIL() << "no UsageError";
  } catch (const flashprobe::UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("random"), std::string::npos) << m;
    EXPECT_NE(m.find("balanced"), std::string::npos) << m;
    EXPECT_NE(m.find("given"), std::string::npos) << m;
    EXPECT_NE(m.find("interleaved"), std::string::npos) << m;
  }
}

// Three kernels of 1, 2 and 4 ms, at least 10 repetitions and 50 ms each: the 1 ms kernel needs 50
// rounds, so every kernel gets 50 timings; each round times every kernel once, rounds in the design's
// rows; nothing after the plan says done; the cap stops a plan whose time is never reached.
TEST(BenchOrder, InterleavedRoundsTimeEveryKernelUntilEachHasItsShare) {
  fb::RoundPlan plan(3, 10, 200, 50.0);
  const double ms[3] = {1.0, 2.0, 4.0};
  int rounds = 0;
  for (std::vector<int> r = plan.next_round(); !r.empty(); r = plan.next_round(), ++rounds) {
    EXPECT_EQ(r, fb::kernel_order(3, rounds, fb::KernelOrder::balanced)) << "round " << rounds;
    for (int k : r) plan.record(k, ms[k]);
  }
  EXPECT_EQ(rounds, 50);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(plan.times(k).size(), 50u) << k;
  EXPECT_TRUE(plan.next_round().empty());
  fb::RoundPlan slow(2, 10, 200, 1e9);  // the time is never reached: max_reps rounds
  int n = 0;
  for (std::vector<int> r = slow.next_round(); !r.empty(); r = slow.next_round(), ++n)
    for (int k : r) slow.record(k, 1.0);
  EXPECT_EQ(n, 200);
  fb::RoundPlan quick(2, 10, 200, 0.0);  // no time floor: min_reps rounds
  n = 0;
  for (std::vector<int> r = quick.next_round(); !r.empty(); r = quick.next_round(), ++n)
    for (int k : r) quick.record(k, 5.0);
  EXPECT_EQ(n, 10);
  EXPECT_TRUE(fb::RoundPlan(0, 10, 200, 1.0).next_round().empty());
}

}  // namespace
