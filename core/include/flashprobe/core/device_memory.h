#pragma once
// The memory operations a run of many cases needs, behind one interface, so that the logic above them
// (kernels/case_arena.h: one allocation kept across cases, re-poisoned and re-guarded per case) is the
// same with and without a GPU:
//   gpu_memory()   the GPU runtime: device allocations, pinned host memory, copies and fills queued
//                  on the default stream (asynchronous; synchronize() waits and reports the device's
//                  errors). @throws NoDevice in a build without a GPU backend.
//   host_memory()  plain host memory, every operation done at once: CPU tests of that logic, with
//                  kernels that are host functions writing through the "device" pointers.
//
// Example:
//   auto mem = host_memory();
//   void* d = mem->allocate(1024);
//   mem->fill(d, 0xFF, 1024);
//   mem->synchronize();
#include <cstddef>
#include <cstdint>
#include <memory>

namespace flashprobe {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // @throws DeviceMemoryShortage (core/error.h) when the device is out of memory.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* device) noexcept = 0;
  // Host memory the copies may use asynchronously (pinned on a GPU).
  virtual void* allocate_host(std::size_t bytes) = 0;
  virtual void release_host(void* host) noexcept = 0;
  // Queued in order; the host side of a copy must stay valid (and unread) until synchronize().
  virtual void fill(void* device, std::uint8_t byte, std::size_t n) = 0;
  virtual void to_device(void* device, const void* host, std::size_t n) = 0;
  virtual void to_host(void* host, const void* device, std::size_t n) = 0;
  // Waits for everything queued (kernels launched on the default stream included).
  // @throws GpuError naming a failed launch or copy.
  virtual void synchronize() = 0;
  // Whether kernels can run on this memory (false for host_memory(): a test's host stand-in kernels).
  virtual bool on_gpu() const = 0;
};

std::unique_ptr<DeviceMemory> gpu_memory();
std::unique_ptr<DeviceMemory> host_memory();

}  // namespace flashprobe
