#pragma once
// What GPU this process can use. With no GPU (or a build without a GPU backend) the result says so
// in `reason`; nothing here throws for a missing device.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace flashprobe {

struct DeviceInfo {
  int index = -1;
  std::string name;          // "NVIDIA H100 80GB HBM3", "AMD Radeon RX 7900 XTX"
  std::string vendor;        // "nvidia" or "amd"
  std::string arch;          // "sm_90", "gfx1100" (feature suffixes such as ":xnack-" dropped)
  int arch_number = 0;       // 90 for sm_90; 0x1100 style is not used: AMD keeps the string only
  int wave_size = 0;         // 32 on NVIDIA; 32 or 64 on AMD
  int multiprocessors = 0;   // SMs / CUs
  long long global_mem_bytes = 0;
  int smem_per_block = 0;        // default limit per block (bytes)
  int smem_per_block_optin = 0;  // limit after opting in (bytes)
  int smem_per_multiprocessor = 0;
  int driver_version = 0;
  int runtime_version = 0;
};

struct DeviceQuery {
  std::vector<DeviceInfo> devices;
  std::string reason;  // why the list is empty: "no GPU device: ...", "built without a GPU backend"
};

DeviceQuery query_devices();
// The first device, or throws NoDevice with the reason.
DeviceInfo require_device();
bool has_device();

void to_json(nlohmann::json& j, const DeviceInfo& d);

}  // namespace flashprobe
