#include "flashprobe/core/buffer.h"

#include <algorithm>
#include <utility>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"

namespace flashprobe {

#ifdef FP_HAVE_GPU_RUNTIME
DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  base_ = fp_rt::device_malloc(bytes + 2 * kGuardBytes, "a guard-banded device buffer of " + std::to_string(bytes) + " bytes");
  std::vector<std::uint8_t> band(kGuardBytes);
  fill_guard(band);
  auto* b = static_cast<std::uint8_t*>(base_);
  FP_CHECK(fp_rt::memcpy_h2d(b, band.data(), kGuardBytes));
  FP_CHECK(fp_rt::memcpy_h2d(b + kGuardBytes + bytes, band.data(), kGuardBytes));
  poison();
}

void DeviceBuffer::release() noexcept {
  if (base_) (void)fp_rt::free(base_);
  base_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::upload(std::span<const std::uint8_t> host) {
  if (host.size() > bytes_)
    throw UsageError("upload of " + std::to_string(host.size()) + " bytes into a buffer of " +
                     std::to_string(bytes_) + " bytes");
  if (!host.empty()) FP_CHECK(fp_rt::memcpy_h2d(data(), host.data(), host.size()));
}

std::vector<std::uint8_t> DeviceBuffer::download() const {
  std::vector<std::uint8_t> v(bytes_);
  if (bytes_) FP_CHECK(fp_rt::memcpy_d2h(v.data(), data(), bytes_));
  return v;
}

void DeviceBuffer::fill_byte(std::uint8_t b) {
  if (bytes_) FP_CHECK(fp_rt::memset(data(), b, bytes_));
}

std::optional<GuardDamage> DeviceBuffer::guard_damage() const {
  std::vector<std::uint8_t> band(kGuardBytes);
  auto* b = static_cast<const std::uint8_t*>(base_);
  FP_CHECK(fp_rt::memcpy_d2h(band.data(), b, kGuardBytes));
  if (auto d = find_guard_damage(band, true)) return d;
  FP_CHECK(fp_rt::memcpy_d2h(band.data(), b + kGuardBytes + bytes_, kGuardBytes));
  return find_guard_damage(band, false);
}
#else
DeviceBuffer::DeviceBuffer(std::size_t) {
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
}
void DeviceBuffer::release() noexcept {}
void DeviceBuffer::upload(std::span<const std::uint8_t>) {}
std::vector<std::uint8_t> DeviceBuffer::download() const { return {}; }
void DeviceBuffer::fill_byte(std::uint8_t) {}
std::optional<GuardDamage> DeviceBuffer::guard_damage() const { return std::nullopt; }
#endif

DeviceBuffer::~DeviceBuffer() { release(); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
void DeviceBuffer::poison() { fill_byte(kPoisonByte); }

}  // namespace flashprobe
