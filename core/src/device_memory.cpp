#include "flashprobe/core/device_memory.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor_async.h"

namespace flashprobe {
namespace {

class HostMemory final : public DeviceMemory {
 public:
  void* allocate(std::size_t bytes) override { return alloc(bytes); }
  void release(void* p) noexcept override { std::free(p); }
  void* allocate_host(std::size_t bytes) override { return alloc(bytes); }
  void release_host(void* p) noexcept override { std::free(p); }
  void fill(void* d, std::uint8_t b, std::size_t n) override { std::memset(d, b, n); }
  void to_device(void* d, const void* h, std::size_t n) override { std::memcpy(d, h, n); }
  void to_host(void* h, const void* d, std::size_t n) override { std::memcpy(h, d, n); }
  void synchronize() override {}
  bool on_gpu() const override { return false; }

 private:
  static void* alloc(std::size_t bytes) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
};

#ifdef FP_HAVE_GPU_RUNTIME
class GpuMemory final : public DeviceMemory {
 public:
  // Out of memory: DeviceMemoryShortage (the harness's shortage, with the runtime's free / total).
  void* allocate(std::size_t bytes) override {
    return fp_rt::device_malloc(bytes ? bytes : 1, "a device allocation of " + std::to_string(bytes) + " bytes");
  }
  void release(void* p) noexcept override { (void)fp_rt::free(p); }
  void* allocate_host(std::size_t bytes) override {
    void* p = nullptr;
    FP_CHECK(fp_rt::malloc_host(&p, bytes ? bytes : 1));
    return p;
  }
  void release_host(void* p) noexcept override { (void)fp_rt::free_host(p); }
  void fill(void* d, std::uint8_t b, std::size_t n) override {
    if (n) FP_CHECK(fp_rt::memset_async(d, b, n, nullptr));
  }
  void to_device(void* d, const void* h, std::size_t n) override {
    if (n) FP_CHECK(fp_rt::memcpy_h2d_async(d, h, n, nullptr));
  }
  void to_host(void* h, const void* d, std::size_t n) override {
    if (n) FP_CHECK(fp_rt::memcpy_d2h_async(h, d, n, nullptr));
  }
  void synchronize() override {
    FP_CHECK(fp_rt::get_last_error());
    FP_CHECK(fp_rt::device_synchronize());
  }
  bool on_gpu() const override { return true; }
};
#endif

}  // namespace

std::unique_ptr<DeviceMemory> host_memory() { return std::make_unique<HostMemory>(); }

std::unique_ptr<DeviceMemory> gpu_memory() {
#ifdef FP_HAVE_GPU_RUNTIME
  return std::make_unique<GpuMemory>();
#else
  throw NoDevice("no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)");
#endif
}

}  // namespace flashprobe
