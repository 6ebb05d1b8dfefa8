#pragma once
// Benchmark inputs: random normal values (never zero in the dtype) for n elements, a pattern of at
// most 4 Mi values generated on the host and repeated. Timing does not care that a 2 GB KV cache
// repeats every 8 MB; generating every value made the host the bottleneck of decode cases.
#include <cstdint>
#include <vector>

#include "flashprobe/core/dtype.h"

namespace flashprobe::bench {

std::vector<std::uint8_t> random_tiled(DType t, std::int64_t n, std::uint64_t seed);

}  // namespace flashprobe::bench
