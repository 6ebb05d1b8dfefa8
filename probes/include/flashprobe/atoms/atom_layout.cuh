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

}  // namespace flashprobe::atoms
