#include "bench/bench_order.h"

#include <algorithm>

#include "flashprobe/core/error.h"

namespace flashprobe::bench {

KernelOrder parse_kernel_order(const std::string& s) {
  if (s == "given") return KernelOrder::given;
  if (s == "balanced") return KernelOrder::balanced;
  if (s == "interleaved") return KernelOrder::interleaved;
  throw UsageError("--order " + s + ": must be balanced (each kernel at each position equally often over the cases), "
                   "interleaved (the kernels of a case in rounds, each round so ordered) or given (the --kernel order "
                   "for every case)");
}

const char* kernel_order_name(KernelOrder o) {
  return o == KernelOrder::given ? "given" : o == KernelOrder::balanced ? "balanced" : "interleaved";
}

int kernel_order_period(int n) { return n <= 1 ? 1 : n % 2 == 0 ? n : 2 * n; }

std::vector<int> kernel_order(int n, long long case_index, KernelOrder o) {
  std::vector<int> v(static_cast<std::size_t>(n > 0 ? n : 0));
  if (o == KernelOrder::given || n <= 1) {
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    return v;
  }
  // Williams' first row 0, 1, n-1, 2, n-2, ...; row r adds r (mod n) to each entry; rows n..2n-1 (odd
  // n) are rows 0..n-1 reversed.
  const int period = kernel_order_period(n);
  const int row = static_cast<int>(case_index % period);
  const int shift = row % n;
  int lo = 1, hi = n - 1;
  for (int j = 0; j < n; ++j) {
    const int first = j == 0 ? 0 : (j % 2 == 1 ? lo++ : hi--);
    v[static_cast<std::size_t>(j)] = (first + shift) % n;
  }
  if (row >= n) std::reverse(v.begin(), v.end());
  return v;
}

RoundPlan::RoundPlan(int kernels, int min_reps, int max_reps, double min_ms)
    : n_(kernels), min_reps_(min_reps), max_reps_(max_reps), min_ms_(min_ms),
      ms_(static_cast<std::size_t>(kernels > 0 ? kernels : 0)), total_(ms_.size(), 0.0) {}

std::vector<int> RoundPlan::next_round() {
  if (n_ <= 0 || rounds_ >= max_reps_) return {};
  if (rounds_ >= min_reps_ && std::all_of(total_.begin(), total_.end(), [&](double t) { return t >= min_ms_; })) return {};
  return kernel_order(n_, rounds_++, KernelOrder::balanced);
}

void RoundPlan::record(int kernel, double ms) {
  ms_[static_cast<std::size_t>(kernel)].push_back(ms);
  total_[static_cast<std::size_t>(kernel)] += ms;
}

}  // namespace flashprobe::bench
