#pragma once
// A minimal parallel-for over [0, n): the caller and up to threads - 1 helpers of one process-wide
// pool pull indices from one atomic counter, so uneven work items (causal rows, short per-batch key
// lengths) balance themselves. The pool's threads start once (the first parallel call) and wait
// between jobs, so a parallel call costs microseconds, not a thread start per helper: the gate checks
// hundreds of small problems a second. The caller always works on its own job, so calls may nest (a
// job's item may make its own parallel call) without waiting on a busy pool. Each item writes its own
// outputs: results do not depend on the number of threads.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace flashprobe::oracle::detail {

// All cores, or FLASHPROBE_ORACLE_THREADS when set (benchmarks compare with one-thread baselines; the
// soak runs one process per core and sets 1).
inline int hardware_threads() {
  static const int n = [] {
    if (const char* e = std::getenv("FLASHPROBE_ORACLE_THREADS"); e && std::atoi(e) > 0) return std::atoi(e);
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return n;
}

// Threads worth using for `flops` of work: about 0.5 MFLOP per thread (a pool hand-off costs a few
// microseconds; property tests run thousands of tiny problems, which stay on the caller's thread).
inline int threads_for(double flops, std::int64_t items) {
  const double per_thread = 5e5;
  const auto by_work = static_cast<std::int64_t>(flops / per_thread) + 1;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({hardware_threads(), by_work, items})));
}

class Pool {
 public:
  struct Job {
    std::int64_t n = 0;
    std::function<void(std::int64_t)> fn;
    std::atomic<std::int64_t> next{0}, done{0};
    std::exception_ptr error;
    std::mutex m;
    std::condition_variable cv;
    // Runs items until none is left; the last item to finish wakes the caller.
    void work() {
      for (std::int64_t i; (i = next.fetch_add(1)) < n;) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(m);
          if (!error) error = std::current_exception();
        }
        if (done.fetch_add(1) + 1 == n) {
          std::lock_guard<std::mutex> lock(m);
          cv.notify_all();
        }
      }
    }
  };

  static Pool& get() {
    static Pool* p = new Pool(hardware_threads() - 1);  // never destroyed: workers may outlive main's statics
    return *p;
  }
  // A pool of its own (tests); like get()'s, never to be destroyed while its workers run.
  explicit Pool(int workers) {
    for (int t = 0; t < workers; ++t) workers_.emplace_back([this] { loop(); });
    for (auto& w : workers_) w.detach();
  }
  // Times a worker woke and found nothing to take (another worker had taken the job first).
  long long futile_wakeups() const { return futile_.load(); }

  // Offers the job to `helpers` pool threads; the caller works on it too, then waits for every item.
  void run(const std::shared_ptr<Job>& job, int helpers) {
    const int offered = std::min<int>(helpers, static_cast<int>(workers_.size()));
    {
      std::lock_guard<std::mutex> lock(m_);
      for (int h = 0; h < offered; ++h) queue_.push_back(job);
    }
    // One waiting worker per copy offered: waking the whole pool for a job of two items made every
    // idle worker take the lock and sleep again, on each of the many small jobs of a gate case.
    for (int h = 0; h < offered; ++h) cv_.notify_one();
    job->work();
    std::unique_lock<std::mutex> lock(job->m);
    job->cv.wait(lock, [&] { return job->done.load() >= job->n; });
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void loop() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(m_);
        while (queue_.empty()) {
          cv_.wait(lock);
          if (queue_.empty()) futile_.fetch_add(1);
        }
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job->work();  // a job already finished by others returns at once
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::thread> workers_;
  std::atomic<long long> futile_{0};
};

template <class Fn>
void parallel_for(std::int64_t n, int threads, Fn&& fn) {
  if (threads <= 1 || n <= 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  auto job = std::make_shared<Pool::Job>();
  job->n = n;
  job->fn = [&fn](std::int64_t i) { fn(i); };
  Pool::get().run(job, threads - 1);
}

// a() and b() at once when `parallel` (b on a pool thread, or the caller when none is free).
template <class A, class B>
void both(bool parallel, A&& a, B&& b) {
  if (!parallel || hardware_threads() < 2) {
    a();
    b();
    return;
  }
  parallel_for(2, 2, [&](std::int64_t i) { i == 0 ? a() : b(); });
}

}  // namespace flashprobe::oracle::detail
