#pragma once
// DeviceBuffer: RAII device memory with guard bands before and after the data, poison fill, and a
// check that the bands are intact.
//
//   DeviceBuffer out(bytes);
//   out.poison();                      // every byte 0xFF: NaN in f16, bf16, f32 and f64
//   launch(..., out.data());
//   if (auto d = out.guard_damage()) fail(d->describe());
//
// Without a GPU runtime, constructing one throws NoDevice.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "flashprobe/core/guard.h"

namespace flashprobe {

inline constexpr std::uint8_t kPoisonByte = 0xFF;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return base_ ? static_cast<std::uint8_t*>(base_) + kGuardBytes : nullptr; }
  template <class T>
  T* as() const { return static_cast<T*>(data()); }
  std::size_t bytes() const { return bytes_; }

  void upload(std::span<const std::uint8_t> host);
  template <class T>
  void upload(const std::vector<T>& v) { upload({reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)}); }
  std::vector<std::uint8_t> download() const;
  template <class T>
  std::vector<T> download_as() const {
    auto raw = download();
    std::vector<T> v(raw.size() / sizeof(T));
    std::copy(raw.begin(), raw.begin() + v.size() * sizeof(T), reinterpret_cast<std::uint8_t*>(v.data()));
    return v;
  }
  void poison();
  void fill_byte(std::uint8_t b);
  // Damage to either band (the first found, the band before the data checked first).
  std::optional<GuardDamage> guard_damage() const;

 private:
  void release() noexcept;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace flashprobe
