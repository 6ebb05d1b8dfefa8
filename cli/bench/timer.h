#pragma once
// Device timing for `flashprobe bench`: events around each repetition after warm-up, many
// repetitions, the median quoted (with min and max), and input sets rotated so that repeated runs
// do not measure the L2 cache. Never times zeros: inputs are drawn random (core/tensor.h).
#include <functional>
#include <vector>

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

// The device-to-device copy ceiling: GB/s counting bytes read plus bytes written, median of reps.
double copy_ceiling_gbps(std::size_t bytes = std::size_t{1} << 30);

}  // namespace flashprobe::bench
