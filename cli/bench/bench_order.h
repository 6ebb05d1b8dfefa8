#pragma once
// The order in which `flashprobe bench` times the kernels of one case. Timed always in the order
// given, the kernel named third of three lost 5-10 % at long d128 shapes against the same kernel timed
// first or second on its own (reports/data/h100-80gb-hbm3/2026-11-27-vs-cudnn-708f029/order/): a
// position, not a kernel, was being measured. The balanced order takes row (case index mod R) of a
// Williams design over the n timed kernels (R = n for even n; for odd n, R = 2n: the square and its
// mirror), so over any R consecutive cases every kernel is timed at every position equally often,
// before every other kernel as often as after it, and directly after every other kernel equally often.
// It depends on the case index and n only: the same command times the same order again.
// Interleaved (RoundPlan): inside a case every kernel is timed once per round, round r in row r of the
// same design, until each has its repetitions, so that all of them see the same drift of clocks and
// temperature over the case (the balanced order alone left the kernel timed first 2-8 % faster than
// itself timed later in the same case: reports/data/h100-80gb-hbm3/2026-11-27-vs-cudnn-06a5a85/).
//
//   const std::vector<int> ord = kernel_order(timed.size(), case_index, KernelOrder::balanced);
//   for (int i : ord) time(timed[i]);
#include <string>
#include <vector>

namespace flashprobe::bench {

enum class KernelOrder { given, balanced, interleaved };

// "given", "balanced" or "interleaved"; anything else is a UsageError naming the value and all three.
KernelOrder parse_kernel_order(const std::string& s);
const char* kernel_order_name(KernelOrder o);

// How many consecutive cases the balanced order takes to give every kernel every position (R above).
int kernel_order_period(int n);

// The indices 0..n-1 of the timed kernels in the order to time them for the case_index-th case timed.
// @pre n >= 0, case_index >= 0
// (interleaved: the case's first round's order.)
std::vector<int> kernel_order(int n, long long case_index, KernelOrder o);

// The rounds of one case in the interleaved order: next_round() gives the kernels of the next round in
// the order to time them, or nothing when every kernel has min_reps timings and min_ms of device time in
// all (or max_reps rounds were run); record() takes each timing.
class RoundPlan {
 public:
  RoundPlan(int kernels, int min_reps, int max_reps, double min_ms);
  std::vector<int> next_round();
  void record(int kernel, double ms);
  const std::vector<double>& times(int kernel) const { return ms_[static_cast<std::size_t>(kernel)]; }

 private:
  int n_, min_reps_, max_reps_, rounds_ = 0;
  double min_ms_;
  std::vector<std::vector<double>> ms_;
  std::vector<double> total_;
};

}  // namespace flashprobe::bench
