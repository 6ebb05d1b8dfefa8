// The order in which bench times the kernels of a case (cli/bench/bench_order.h): every row a
// permutation; over any period of consecutive cases each kernel at each position equally often, before
// each other kernel as often as after it, directly after each other kernel equally often; the same case
// index gives the same order; "given" keeps the --kernel order; a bad name is a UsageError naming both.
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
  for (fb::KernelOrder o : {fb::KernelOrder::given, fb::KernelOrder::balanced})
    EXPECT_EQ(fb::parse_kernel_order(fb::kernel_order_name(o)), o);
  try {
    fb::parse_kernel_order("random");
    FAIL() << "no UsageError";
  } catch (const flashprobe::UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("random"), std::string::npos) << m;
    EXPECT_NE(m.find("balanced"), std::string::npos) << m;
    EXPECT_NE(m.find("given"), std::string::npos) << m;
  }
}

}  // namespace
