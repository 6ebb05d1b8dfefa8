#include "flashprobe/core/guard.h"

namespace flashprobe {

void fill_guard(std::span<std::uint8_t> band, std::size_t band_offset) {
  for (std::size_t i = 0; i < band.size(); ++i) band[i] = guard_byte(band_offset + i);
}

std::optional<GuardDamage> find_guard_damage(std::span<const std::uint8_t> band, bool before) {
  std::optional<GuardDamage> dmg;
  for (std::size_t i = 0; i < band.size(); ++i) {
    if (band[i] == guard_byte(i)) continue;
    const std::size_t dist = before ? band.size() - 1 - i : i;
    if (!dmg) dmg = GuardDamage{before, dist, 0};
    if (before) dmg->offset = dist;  // walking forward, the last damaged byte is the nearest one
    else if (dist < dmg->offset) dmg->offset = dist;
    ++dmg->bytes;
  }
  return dmg;
}

std::string GuardDamage::describe() const {
  return std::to_string(bytes) + " byte(s) written " + (before ? "before" : "after") +
         " the buffer, nearest " + std::to_string(offset) + " byte(s) " +
         (before ? "before its start" : "past its end");
}

}  // namespace flashprobe
