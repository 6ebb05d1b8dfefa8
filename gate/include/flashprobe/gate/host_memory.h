#pragma once
// The gate's host memory between cases. Each oracle check allocates its vectors afresh (the
// reference, the emulation, the gathered output, the rounded reference: 8 bytes per checked O
// element each, megabytes for the gate's larger problems). With glibc's defaults the heap top is
// given back to the system once more than twice the largest freed block lies free there, and taken
// again by the next case, page by page (the kernel zeroing each page; measured in oracle/SPEED.md).
// keep_freed_host_memory()
// makes the process keep what it freed (up to kKeptBytes at the heap top) and serve blocks up to
// kHeapBlockBytes from the heap instead of fresh mappings. run_property calls it; it changes where
// memory comes from, never what is computed.
#include <cstddef>

namespace flashprobe::gate {

inline constexpr std::size_t kKeptBytes = std::size_t{512} << 20;
inline constexpr std::size_t kHeapBlockBytes = std::size_t{32} << 20;  // glibc's largest mmap threshold

// Idempotent; returns false where the C library offers no such setting (then nothing changes).
bool keep_freed_host_memory();

}  // namespace flashprobe::gate
