#pragma once
// Device timing for `flashprobe bench`: events around each repetition after warm-up, many
// repetitions, the median quoted (with min and max), and input sets rotated so that repeated runs
// do not measure the L2 cache. Never times zeros: inputs are drawn random (flashprobe/core/tensor.h).
#include <functional>
#include <vector>

#include "flashprobe/kernels/registry.h"  // Stream (void* where there is no GPU runtime)

namespace flashprobe::bench {

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  // Host wall time of one launch(rep) call (median): the events enclose it, and the device sits idle
  // while it runs, so it is part of median_ms; for short kernels it can be a large part.
  double launch_host_us = 0;
};

// Runs `launch(rep)` `warmup` times, then times single repetitions with device events until
// `min_reps` are done and `min_seconds` of device time has passed (at most `max_reps`).
// @throws NoDevice without a GPU, GpuError on a failing launch.
Timing time_device(const std::function<void(int rep)>& launch, int warmup = 3, int min_reps = 10,
                   int max_reps = 200, double min_seconds = 0.25);

// Times kernels without the host in the way: `launch(set, stream)` is called once per input set
// (`sets` >= 1) as plain warm-ups, then recorded into one graph on a stream of its own, and each
// repetition is one replay of that graph between device events, divided by `sets`. The host's part
// (argument checks, tensor maps, the launch calls) happens at capture, not in the timed region; what
// remains is one graph launch per `sets` kernels. launch_host_us is the graph launch call's.
// @pre launch puts all its work on the stream it is given (it is captured).
Timing time_graph(const std::function<void(int set, kernels::Stream s)>& launch, int sets, int warmup = 3,
                  int min_reps = 10, int max_reps = 200, double min_seconds = 0.25);

// time_graph for several kernels of one case at once (bench --order interleaved): each captured into
// its own graph and warmed up as there, then timed one replay each per round, the rounds in the order
// of bench_order.h's RoundPlan, until each has min_reps replays and min_seconds of device time (at most
// max_reps rounds); one Timing per launch, in the order given.
std::vector<Timing> time_graphs_interleaved(const std::vector<std::function<void(int set, kernels::Stream s)>>& launches,
                                           int sets, int warmup = 3, int min_reps = 10, int max_reps = 200,
                                           double min_seconds = 0.25);

// The device-to-device copy ceiling: GB/s counting bytes read plus bytes written, median of reps.
double copy_ceiling_gbps(std::size_t bytes = std::size_t{1} << 30);

}  // namespace flashprobe::bench
