#pragma once
// The order in which `flashprobe bench` times the kernels of one case. Timed always in the order
// given, the kernel named third of three lost 5-10 % at long d128 shapes against the same kernel timed
// first or second on its own (reports/data/h100-80gb-hbm3/2026-11-27-vs-cudnn-708f029/order/): a
// position, not a kernel, was being measured. The balanced order takes row (case index mod R) of a
// Williams design over the n timed kernels (R = n for even n; for odd n, R = 2n: the square and its
// mirror), so over any R consecutive cases every kernel is timed at every position equally often,
// before every other kernel as often as after it, and directly after every other kernel equally often.
// It depends on the case index and n only: the same command times the same order again.
//
//   const std::vector<int> ord = kernel_order(timed.size(), case_index, KernelOrder::balanced);
//   for (int i : ord) time(timed[i]);
#include <string>
#include <vector>

namespace flashprobe::bench {

enum class KernelOrder { given, balanced };

// "given" or "balanced"; anything else is a UsageError naming the value and both.
KernelOrder parse_kernel_order(const std::string& s);
const char* kernel_order_name(KernelOrder o);

// How many consecutive cases the balanced order takes to give every kernel every position (R above).
int kernel_order_period(int n);

// The indices 0..n-1 of the timed kernels in the order to time them for the case_index-th case timed.
// @pre n >= 0, case_index >= 0
std::vector<int> kernel_order(int n, long long case_index, KernelOrder o);

}  // namespace flashprobe::bench
