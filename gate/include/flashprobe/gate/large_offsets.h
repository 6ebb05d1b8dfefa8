#pragma once
// Offsets past 2^31 elements: the property gate's problems are small, so a kernel that forms a
// batch or head offset in 32 bits passes every other property. LargeOffsetsAgree runs a problem of
// the kernel's domain with two batch elements whose second one lies kLargeBatchStride elements past
// the first in Q, K, V and O (device buffers of about 2^31 elements each, filled only where the
// problem reads) and checks it against the oracle on the compact copy of the same values.
#include <cstdint>
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

// Launches the subject's kernel directly (its launch(), not its runner): device subjects only.
void prop_large_offsets_agree(const Subject& s);

}  // namespace flashprobe::gate
