#pragma once
// Host helpers shared by the launchers: move an experiment batch to the device in guarded buffers
// and bring the results back, failing loudly if a kernel wrote outside its output.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"

namespace flashprobe::nvidia::detail {

template <class T>
DeviceBuffer to_device(std::span<const T> host) {
  DeviceBuffer b(std::max<std::size_t>(host.size_bytes(), 16));
  b.upload({reinterpret_cast<const std::uint8_t*>(host.data()), host.size_bytes()});
  return b;
}

// Output buffers start poisoned (all bytes 0xFF: NaN as f32), so an element the kernel never wrote
// is visible as NaN rather than as a plausible zero.
inline DeviceBuffer output_buffer(std::size_t bytes) { return DeviceBuffer(std::max<std::size_t>(bytes, 16)); }

template <class T>
void from_device(const DeviceBuffer& b, std::span<T> out, const std::string& what) {
  FP_CHECK(fp_rt::device_synchronize());
  if (auto d = b.guard_damage())
    throw std::runtime_error(what + ": kernel wrote outside its output buffer: " + d->describe());
  const auto raw = b.download();
  std::memcpy(out.data(), raw.data(), out.size_bytes());
}

inline int blocks_for(long long warps, int warps_per_block) {
  return static_cast<int>((warps + warps_per_block - 1) / warps_per_block);
}

}  // namespace flashprobe::nvidia::detail
