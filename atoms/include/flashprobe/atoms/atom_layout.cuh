#pragma once
// Device side of the kernel-facing atoms: the layout contract and its derivations live in
// layouts.h (host- and device-compilable); this adds the register packing the mma() wrappers use.
#include "flashprobe/atoms/layouts.h"
#include "flashprobe/core/device.cuh"

namespace flashprobe::atoms {

// Two 16-bit elements in one 32-bit register: even slot in the low half (PTX .f16x2, AMD vectors).
FP_DEV std::uint32_t pack2(std::uint16_t lo, std::uint16_t hi) {
  return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
}

// Four 8-bit elements in one 32-bit register, slot 4r + q in byte q (PTX .s8 fragments, AMD fp8).
FP_DEV std::uint32_t pack4(std::uint8_t b0, std::uint8_t b1, std::uint8_t b2, std::uint8_t b3) {
  return static_cast<std::uint32_t>(b0) | (static_cast<std::uint32_t>(b1) << 8) |
         (static_cast<std::uint32_t>(b2) << 16) | (static_cast<std::uint32_t>(b3) << 24);
}
// Register r of a fragment from its slots' element bits (16-bit or 8-bit elements): the packing
// every atom's mma() expects (layouts.h).
template <int kBits>
FP_DEV std::uint32_t pack_register(const std::uint32_t* bits, int r) {
  static_assert(kBits == 16 || kBits == 8);
  if constexpr (kBits == 16) return pack2(static_cast<std::uint16_t>(bits[2 * r]), static_cast<std::uint16_t>(bits[2 * r + 1]));
  else
    return pack4(static_cast<std::uint8_t>(bits[4 * r]), static_cast<std::uint8_t>(bits[4 * r + 1]),
                 static_cast<std::uint8_t>(bits[4 * r + 2]), static_cast<std::uint8_t>(bits[4 * r + 3]));
}
// The inverse: slot s of a fragment from its registers.
template <int kBits>
FP_DEV std::uint32_t unpack_slot(const std::uint32_t* regs, int s) {
  constexpr int kPer = 32 / kBits;
  return (regs[s / kPer] >> (kBits * (s % kPer))) & ((1u << kBits) - 1u);
}
}  // namespace flashprobe::atoms
