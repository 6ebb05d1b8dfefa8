#pragma once
// A minimal parallel-for over [0, n): std::thread workers pulling indices from one atomic counter, so
// uneven work items (causal rows, short per-batch key lengths) balance themselves.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flashprobe::oracle::detail {

// All cores, or FLASHPROBE_ORACLE_THREADS when set (benchmarks compare with one-thread baselines).
inline int hardware_threads() {
  static const int n = [] {
    if (const char* e = std::getenv("FLASHPROBE_ORACLE_THREADS"); e && std::atoi(e) > 0) return std::atoi(e);
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return n;
}

// Threads worth using for `flops` of work: below ~4 MFLOP per thread, starting threads costs more than
// it saves (property tests run thousands of tiny problems).
inline int threads_for(double flops, std::int64_t items) {
  const double per_thread = 4e6;
  const auto by_work = static_cast<std::int64_t>(flops / per_thread) + 1;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({hardware_threads(), by_work, items})));
}

template <class Fn>
void parallel_for(std::int64_t n, int threads, Fn&& fn) {
  if (threads <= 1 || n <= 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    try {
      for (std::int64_t i; (i = next.fetch_add(1)) < n;) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace flashprobe::oracle::detail
