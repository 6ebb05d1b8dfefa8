#pragma once
// A device described without a GPU, for host code that asks kernels about one (the gate's domains
// and device check in CPU tests, the gate's host benchmark): an H100's sizes (132 SMs, 80 GiB,
// 48 KiB shared memory per block, 227 KiB opt-in, 228 KiB per SM) under any vendor, arch and wave.
//
// Example:
//   const Domain d = kernel_domain(*find_kernel("wgmma"), stand_in_h100());
//   device_refusal(k, stand_in_device("amd", "gfx942", 0, 64));
#include <string>

#include "flashprobe/core/device_info.h"

namespace flashprobe::gate {

inline DeviceInfo stand_in_device(const std::string& vendor, const std::string& arch, int arch_number, int wave_size) {
  DeviceInfo d;
  d.index = 0;
  d.name = "fabricated " + arch;
  d.vendor = vendor;
  d.arch = arch;
  d.arch_number = arch_number;
  d.wave_size = wave_size;
  d.multiprocessors = 132;
  d.global_mem_bytes = 80LL << 30;
  d.smem_per_block = 48 << 10;
  d.smem_per_block_optin = 227 << 10;
  d.smem_per_multiprocessor = 228 << 10;
  return d;
}

inline DeviceInfo stand_in_h100() { return stand_in_device("nvidia", "sm_90", 90, 32); }

}  // namespace flashprobe::gate
