// The oracle's thread pool (oracle/src/parallel.h): every item runs once, and a small job wakes only
// the workers it is offered to (waking the whole pool per job cost each of a gate case's many small
// parallel calls a lock round by every idle worker).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <memory>

#include "../../oracle/src/parallel.h"
#include "../../oracle/src/work.h"
#include "flashprobe/core/problem.h"

using flashprobe::oracle::detail::Pool;

namespace {

void run_job(Pool& pool, std::int64_t n, int helpers, std::atomic<long long>& sum,
             std::chrono::microseconds item = std::chrono::microseconds(0)) {
  auto job = std::make_shared<Pool::Job>();
  job->n = n;
  job->fn = [&sum, item](std::int64_t i) {
    if (item.count()) std::this_thread::sleep_for(item);
    sum.fetch_add(i + 1);
  };
  pool.run(job, helpers);
}

}  // namespace

TEST(OraclePool, EveryItemRunsOnce) {
  static Pool* pool = new Pool(3);  // never destroyed (its workers are detached)
  for (int n : {1, 2, 7, 100}) {
    std::atomic<long long> sum{0};
    run_job(*pool, n, 3, sum);
    EXPECT_EQ(sum.load(), static_cast<long long>(n) * (n + 1) / 2) << n << " items";
  }
}

TEST(OraclePool, SmallJobsWakeOnlyTheWorkersOfferedTo) {
  static Pool* pool = new Pool(8);
  constexpr int kJobs = 40;
  std::atomic<long long> sum{0};
  for (int j = 0; j < kJobs; ++j) {
    // Items long enough for a woken worker to take one, and a pause for the pool to sleep again.
    run_job(*pool, 2, 1, sum, std::chrono::microseconds(300));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(sum.load(), 3LL * kJobs);
  // One helper offered per job: at most a few workers wake to an empty queue (a job taken by the
  // caller's side first). Waking all 8 per job gives about 7 futile wake-ups per job.
  EXPECT_LT(pool->futile_wakeups(), kJobs / 2) << "idle workers woke for jobs they were not offered";
}

// A problem of few keys and many O elements (b1 hq4 hkv2 sq63 sk3 d96, 24,192 elements: about 1 ms of
// one core's check, 0.29 Mflop of products) is worth the pool; by its flops alone it was not (the
// threshold was 1 Mflop).
TEST(OracleWork, CountsOutputElementsBesideFlops) {
  flashprobe::AttnProblem p;
  p.batch = 1;
  p.hq = 4;
  p.hkv = 2;
  p.sq = 63;
  p.sk = 3;
  p.d = p.dv = 96;
  const double w = flashprobe::oracle::detail::engine_work(p, p.sq);
  EXPECT_GE(w, flashprobe::oracle::detail::kBesideWork);
  EXPECT_GE(w, 100.0 * 63 * 4 * 96);
  // A tiny problem stays on the caller's thread.
  p.sq = 1;
  p.hq = p.hkv = 1;
  EXPECT_LT(flashprobe::oracle::detail::engine_work(p, p.sq), flashprobe::oracle::detail::kBesideWork);
}
