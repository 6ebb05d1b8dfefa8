#include "bench/random_tiled.h"

#include <algorithm>
#include <cstring>

#include "flashprobe/core/tensor.h"

namespace flashprobe::bench {

std::vector<std::uint8_t> random_tiled(DType t, std::int64_t n, std::uint64_t seed) {
  const Tensor pat = random_normal(t, std::min<std::int64_t>(n, std::int64_t{1} << 22), seed);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n) * dtype_size(t));
  for (std::size_t off = 0; off < out.size(); off += pat.bytes.size())
    std::memcpy(out.data() + off, pat.bytes.data(), std::min(pat.bytes.size(), out.size() - off));
  return out;
}

}  // namespace flashprobe::bench
