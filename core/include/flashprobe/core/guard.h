#pragma once
// Guard bands: every device allocation is surrounded by bytes of a known pattern; a kernel that
// writes outside its output damages them. The check works on host copies of the bands, so the logic
// is the same (and CPU-testable) whatever the backend.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace flashprobe {

inline constexpr std::size_t kGuardBytes = 4096;
// A byte pattern that is not 0, not 0xFF (the poison) and not a common small value.
inline constexpr std::uint8_t guard_byte(std::size_t i) { return static_cast<std::uint8_t>(0xA5u ^ (i * 131u)); }

void fill_guard(std::span<std::uint8_t> band, std::size_t band_offset = 0);

struct GuardDamage {
  bool before = false;         // the band before the data (an underflow) or after it (an overflow)
  std::size_t offset = 0;      // distance from the data edge, in bytes (0 = adjacent byte)
  std::size_t bytes = 0;       // number of damaged bytes in that band
  std::string describe() const;
};

// First damaged byte of a band, or nothing if intact. `before` says which band this is: for the band
// before the data, offsets count backwards from the data start.
std::optional<GuardDamage> find_guard_damage(std::span<const std::uint8_t> band, bool before);

}  // namespace flashprobe
