#pragma once
// Offsets past 2^31 elements: the property gate's problems are small, so a kernel that forms a
// batch or head offset in 32 bits passes every other property. LargeOffsetsAgree runs a problem of
// the kernel's domain with two batch elements whose second one lies kLargeBatchStride elements past
// the first in Q, K, V and O (device buffers of about 2^31 elements each, filled only where the
// problem reads; held for the run by hold_large_offsets) and checks it against the oracle on the compact copy of the same values.
#include <cstdint>
#include <memory>
#include <string>

#include "flashprobe/gate/subject.h"

namespace flashprobe::gate {

// The batch stride of every tensor: past 2^31, a multiple of 8 elements (TMA-fed kernels need it).
inline constexpr std::int64_t kLargeBatchStride = (std::int64_t{1} << 31) + 64;
// Elements one batch element of a drawn problem may hold (per tensor), past the stride.
inline constexpr std::int64_t kLargeBatchElems = std::int64_t{1} << 22;

// Device bytes the property holds for a subject (four tensors of the widest dtype its domain takes).
std::int64_t large_offsets_bytes(const Subject& s);
// Empty when the subject's device has the memory for it; else the reason (about the device).
std::string large_offsets_refusal(const Subject& s);

// The property's four device tensors for its whole run, under the device's lock shared by the gates
// on this machine (device_hold.h; the subject's memory, else the GPU runtime's): released when the
// returned pointer goes. @throws DeviceMemoryShortage naming the tensor (or the lock), the bytes and
// the runtime's free / total when they cannot be had within FLASHPROBE_GATE_LOCK_WAIT_S.
std::shared_ptr<void> hold_large_offsets(const Subject& s);

// Launches the subject's kernel directly (its launch(), not its runner): device subjects only.
void prop_large_offsets_agree(const Subject& s);

}  // namespace flashprobe::gate
