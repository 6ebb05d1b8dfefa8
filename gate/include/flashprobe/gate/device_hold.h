#pragma once
// Large device buffers a property holds for its whole run (LargeOffsetsAgree: four tensors of about
// 2^31 elements), shared fairly by the gates on one machine, and a shortage told apart from a
// kernel's failure.
//
// Several `flashprobe gate` processes on one GPU (run-all's gate-plugins stage runs 8) would each
// allocate 17-34 GB at once and starve each other (measured on an H100 80 GB: the example plug-in and
// the bug-free control "failed" LargeOffsetsAgree with cudaErrorMemoryAllocation). So a hold:
//   1. takes an exclusive lock on the device's lock file (flock: released by the kernel if the
//      process dies), $FLASHPROBE_GATE_LOCK_DIR/flashprobe-gate-device<N>.lock (default folder
//      $TMPDIR, else /tmp), waiting for it;
//   2. allocates its buffers, retrying while the device is short of memory (other processes' memory
//      comes and goes);
//   3. gives up after FLASHPROBE_GATE_LOCK_WAIT_S seconds in all (default 120) with a
//      DeviceMemoryShortage naming the buffer (or the lock), the bytes and the runtime's free / total.
// Destroying the hold frees the buffers, then releases the lock.
//
// The memory is core's DeviceMemory (core/device_memory.h: the GPU runtime's allocations throw
// DeviceMemoryShortage when the device is full), so that the lock, the retry and the shortage are
// tested on the CPU with a stand-in that fails (tests/gate/test_device_hold.cpp).
//
// Example:
//   HoldRequest r{{{"Q", q_bytes}, {"K", k_bytes}}, device_lock_path(dev.index), device_wait_seconds()};
//   const auto held = hold_device_buffers(std::shared_ptr<DeviceMemory>(gpu_memory()), r);  // or DeviceMemoryShortage
//   void* q = held->buffers[0];
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flashprobe/core/device_memory.h"

namespace flashprobe::gate {

// An exclusive lock on a file across processes (flock), held until destroyed.
class FileLock {
 public:
  // Waits up to wait_s seconds (polling every poll_s); nullptr when another holder kept it that long.
  // @throws UsageError when the file cannot be opened (naming it and the folder's variable).
  static std::unique_ptr<FileLock> acquire(const std::string& path, double wait_s, double poll_s = 0.05);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// $FLASHPROBE_GATE_LOCK_DIR (else $TMPDIR, else /tmp)/flashprobe-gate-device<index>.lock
std::string device_lock_path(int device_index);
// FLASHPROBE_GATE_LOCK_WAIT_S (default 120): how long a hold waits for the lock and its memory, in
// all. @throws UsageError naming the value when it is not a number >= 0.
double device_wait_seconds();

struct HoldRequest {
  std::vector<std::pair<std::string, std::size_t>> buffers;  // what each is for (named in a shortage), bytes
  std::string lock_path;                                      // "" takes no lock
  double wait_s = 120;                                        // lock and memory together
  double retry_s = 1;                                         // between allocation attempts
};

struct DeviceHold {
  std::vector<void*> buffers;     // the request's, in its order
  double waited_s = 0;            // for the lock and the memory
  ~DeviceHold();
  DeviceHold(const DeviceHold&) = delete;
  DeviceHold& operator=(const DeviceHold&) = delete;

 private:
  friend std::unique_ptr<DeviceHold> hold_device_buffers(std::shared_ptr<DeviceMemory> m, const HoldRequest& r);
  DeviceHold() = default;
  std::shared_ptr<DeviceMemory> memory_;
  std::unique_ptr<FileLock> lock_;
};

// The request's buffers under its lock. @throws DeviceMemoryShortage (core/error.h) naming the buffer
// that did not fit (or the lock that was not had), its bytes, the runtime's free / total and the wait.
std::unique_ptr<DeviceHold> hold_device_buffers(std::shared_ptr<DeviceMemory> m, const HoldRequest& r);

}  // namespace flashprobe::gate
