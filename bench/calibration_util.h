#pragma once
// Shared pieces of the calibration programs (calibrate_tolerance.cpp, calibrate_backward.cpp).
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace flashprobe::bench {

// The q-quantile of v (0 for an empty v): the element at rank floor(q * n), clamped to the last.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// run(i) for i in [0, n) on every hardware thread; the results concatenated in the order of i.
template <class Sample, class Run>
std::vector<Sample> run_problems(int n, Run run) {
  std::vector<std::vector<Sample>> per(static_cast<std::size_t>(n));
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i; (i = next.fetch_add(1)) < n;) per[static_cast<std::size_t>(i)] = run(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  std::vector<Sample> all;
  for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
  return all;
}

}  // namespace flashprobe::bench
