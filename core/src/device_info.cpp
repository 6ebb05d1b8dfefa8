#include "flashprobe/core/device_info.h"

#include <nlohmann/json.hpp>

#include "flashprobe/core/build_info.h"
#include "flashprobe/core/vendor.h"

namespace flashprobe {

DeviceQuery query_devices() {
  DeviceQuery q;
#ifndef FP_HAVE_GPU_RUNTIME
  q.reason = "no GPU device: this build has no GPU backend (FLASHPROBE_GPU=off)";
#else
  int n = 0;
  const fp_rt::Error e = fp_rt::get_device_count(&n);
  if (e != fp_rt::kSuccess || n == 0) {
    (void)fp_rt::get_last_error();
    q.reason = std::string("no GPU device: ") + fp_rt::kVendor + " runtime reports " +
               (e != fp_rt::kSuccess ? fp_rt::error_name(e) : "0 devices");
    return q;
  }
  for (int i = 0; i < n; ++i) {
    fp_rt::DeviceProp p{};
    FP_CHECK(fp_rt::get_device_properties(&p, i));
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.vendor = fp_rt::kVendor;
#if defined(FP_VENDOR_HIP)
    d.arch = p.gcnArchName;
    if (auto colon = d.arch.find(':'); colon != std::string::npos) d.arch.resize(colon);
#else
    d.arch_number = p.major * 10 + p.minor;
    d.arch = "sm_" + std::to_string(d.arch_number);
#endif
    d.wave_size = p.warpSize;
    d.multiprocessors = p.multiProcessorCount;
    d.global_mem_bytes = static_cast<long long>(p.totalGlobalMem);
    d.smem_per_block = static_cast<int>(p.sharedMemPerBlock);
#if defined(FP_VENDOR_HIP)
    d.smem_per_block_optin = static_cast<int>(p.sharedMemPerBlock);
    d.smem_per_multiprocessor = static_cast<int>(p.maxSharedMemoryPerMultiProcessor);
#else
    d.smem_per_block_optin = static_cast<int>(p.sharedMemPerBlockOptin);
    d.smem_per_multiprocessor = static_cast<int>(p.sharedMemPerMultiprocessor);
#endif
    FP_CHECK(fp_rt::driver_get_version(&d.driver_version));
    FP_CHECK(fp_rt::runtime_get_version(&d.runtime_version));
    q.devices.push_back(d);
  }
#endif
  return q;
}

bool has_device() { return !query_devices().devices.empty(); }

DeviceInfo require_device() {
  auto q = query_devices();
  if (q.devices.empty()) throw NoDevice(q.reason);
  return q.devices.front();
}

void to_json(nlohmann::json& j, const DeviceInfo& d) {
  j = nlohmann::json{{"index", d.index},
                     {"name", d.name},
                     {"vendor", d.vendor},
                     {"arch", d.arch},
                     {"wave_size", d.wave_size},
                     {"multiprocessors", d.multiprocessors},
                     {"global_mem_bytes", d.global_mem_bytes},
                     {"smem_per_block", d.smem_per_block},
                     {"smem_per_block_optin", d.smem_per_block_optin},
                     {"smem_per_multiprocessor", d.smem_per_multiprocessor},
                     {"driver_version", d.driver_version},
                     {"runtime_version", d.runtime_version}};
}

}  // namespace flashprobe
