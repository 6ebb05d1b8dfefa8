#include "bench/timer.h"

#include <algorithm>

#include "bench/bench_order.h"
#include <chrono>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"

namespace flashprobe::bench {

#ifdef FP_HAVE_GPU_RUNTIME
namespace {

// Device events on stream `st` around each call(rep) until min_reps are done and min_seconds of
// device time has passed (at most max_reps); the time per rep divided by `divisor`, its median, and
// the median host time of one call.
// The median, min and max of per-rep times and the median host time of one call.
Timing summarize(std::vector<double> ms, std::vector<double> host_us) {
  std::sort(ms.begin(), ms.end());
  std::sort(host_us.begin(), host_us.end());
  Timing out;
  out.reps = static_cast<int>(ms.size());
  out.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  out.min_ms = ms.front();
  out.max_ms = ms.back();
  out.launch_host_us = host_us[host_us.size() / 2];
  return out;
}

// A graph of `sets` launches on stream st after plain warm-up launches, replayed `warmup` times.
fp_rt::GraphExec warm_graph(const std::function<void(int, kernels::Stream)>& launch, fp_rt::Stream st, int sets, int warmup) {
  // Plain launches first: module loading, one-time attributes and workspaces happen outside capture.
  for (int i = 0; i < std::max(warmup, 1); ++i) launch(i % sets, st);
  FP_CHECK(fp_rt::stream_synchronize(st));
  fp_rt::Graph g;
  fp_rt::GraphExec ge;
  FP_CHECK(fp_rt::stream_begin_capture(st));
  for (int i = 0; i < sets; ++i) launch(i, st);
  FP_CHECK(fp_rt::stream_end_capture(st, &g));
  FP_CHECK(fp_rt::graph_instantiate(&ge, g));
  FP_CHECK(fp_rt::graph_destroy(g));
  for (int i = 0; i < warmup; ++i) FP_CHECK(fp_rt::graph_launch(ge, st));
  FP_CHECK(fp_rt::stream_synchronize(st));
  return ge;
}

Timing time_reps(const std::function<void(int)>& call, fp_rt::Stream st, int divisor, int min_reps, int max_reps,
                 double min_seconds) {
  fp_rt::Event a, b;
  FP_CHECK(fp_rt::event_create(&a));
  FP_CHECK(fp_rt::event_create(&b));
  std::vector<double> ms, host_us;
  double total = 0;
  for (int r = 0; r < max_reps && (r < min_reps || total < min_seconds * 1e3); ++r) {
    FP_CHECK(fp_rt::event_record(a, st));
    const auto h0 = std::chrono::steady_clock::now();
    call(r);
    host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
    FP_CHECK(fp_rt::event_record(b, st));
    FP_CHECK(fp_rt::event_synchronize(b));
    float t = 0;
    FP_CHECK(fp_rt::event_elapsed_ms(&t, a, b));
    ms.push_back(double(t) / divisor);
    total += t;
  }
  FP_CHECK(fp_rt::event_destroy(a));
  FP_CHECK(fp_rt::event_destroy(b));
  return summarize(std::move(ms), std::move(host_us));
}

}  // namespace

Timing time_device(const std::function<void(int)>& launch, int warmup, int min_reps, int max_reps, double min_seconds) {
  for (int i = 0; i < warmup; ++i) launch(i);
  FP_CHECK(fp_rt::device_synchronize());
  return time_reps([&](int r) { launch(warmup + r); }, nullptr, 1, min_reps, max_reps, min_seconds);
}

Timing time_graph(const std::function<void(int, kernels::Stream)>& launch, int sets, int warmup, int min_reps, int max_reps,
                  double min_seconds) {
  fp_rt::Stream st;
  FP_CHECK(fp_rt::stream_create(&st));
  fp_rt::GraphExec ge = warm_graph(launch, st, sets, warmup);
  const Timing t = time_reps([&](int) { FP_CHECK(fp_rt::graph_launch(ge, st)); }, st, sets, min_reps, max_reps, min_seconds);
  FP_CHECK(fp_rt::graph_exec_destroy(ge));
  FP_CHECK(fp_rt::stream_destroy(st));
  return t;
}

std::vector<Timing> time_graphs_interleaved(const std::vector<std::function<void(int, kernels::Stream)>>& launches,
                                           int sets, int warmup, int min_reps, int max_reps, double min_seconds) {
  fp_rt::Stream st;
  FP_CHECK(fp_rt::stream_create(&st));
  std::vector<fp_rt::GraphExec> ges;
  for (const auto& launch : launches) ges.push_back(warm_graph(launch, st, sets, warmup));
  fp_rt::Event a, b;
  FP_CHECK(fp_rt::event_create(&a));
  FP_CHECK(fp_rt::event_create(&b));
  const int n = static_cast<int>(launches.size());
  RoundPlan plan(n, min_reps, max_reps, min_seconds * 1e3 / sets);
  std::vector<std::vector<double>> host_us(launches.size());
  for (std::vector<int> round = plan.next_round(); !round.empty(); round = plan.next_round())
    for (const int k : round) {
      FP_CHECK(fp_rt::event_record(a, st));
      const auto h0 = std::chrono::steady_clock::now();
      FP_CHECK(fp_rt::graph_launch(ges[static_cast<std::size_t>(k)], st));
      host_us[static_cast<std::size_t>(k)].push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
      FP_CHECK(fp_rt::event_record(b, st));
      FP_CHECK(fp_rt::event_synchronize(b));
      float t = 0;
      FP_CHECK(fp_rt::event_elapsed_ms(&t, a, b));
      plan.record(k, double(t) / sets);
    }
  FP_CHECK(fp_rt::event_destroy(a));
  FP_CHECK(fp_rt::event_destroy(b));
  std::vector<Timing> out;
  for (int k = 0; k < n; ++k) out.push_back(summarize(plan.times(k), host_us[static_cast<std::size_t>(k)]));
  for (fp_rt::GraphExec& ge : ges) FP_CHECK(fp_rt::graph_exec_destroy(ge));
  FP_CHECK(fp_rt::stream_destroy(st));
  return out;
}

double copy_ceiling_gbps(std::size_t bytes) {
  DeviceBuffer src(bytes), dst(bytes);
  src.fill_byte(0x3C);  // not zeros
  const Timing t = time_device([&](int) { FP_CHECK(fp_rt::memcpy_d2d_async(dst.data(), src.data(), bytes, nullptr)); });
  return 2.0 * double(bytes) / (t.median_ms * 1e-3) / 1e9;
}
#else
Timing time_device(const std::function<void(int)>&, int, int, int, double) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
}
Timing time_graph(const std::function<void(int, kernels::Stream)>&, int, int, int, int, double) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
}
std::vector<Timing> time_graphs_interleaved(const std::vector<std::function<void(int, kernels::Stream)>>&, int, int, int, int,
                                           double) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
}
double copy_ceiling_gbps(std::size_t) { throw NoDevice("no GPU device: this build has no GPU backend"); }
#endif

}  // namespace flashprobe::bench
