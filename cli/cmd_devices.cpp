// flashprobe devices: what GPU this process sees (name, arch, wave size), or why there is none.
#include <iostream>
#include <nlohmann/json.hpp>

#include "command.h"
#include "flashprobe/core/device_info.h"

namespace flashprobe::cli {
namespace {
CommandRegistration reg("devices", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("devices", "List the GPUs this build can use (or say there is none)");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON instead of text");
  return [json] {
    const auto q = query_devices();
    if (*json) {
      nlohmann::json j{{"devices", q.devices}, {"reason", q.reason}};
      std::cout << j.dump(1) << "\n";
      return 0;
    }
    if (q.devices.empty()) {
      std::cout << "none: " << q.reason << "\n";
      return 0;
    }
    for (const auto& d : q.devices)
      std::cout << d.index << ": " << d.name << "  arch " << d.arch << "  vendor " << d.vendor << "  wave "
                << d.wave_size << "  " << d.multiprocessors << " multiprocessors  "
                << d.global_mem_bytes / (1024 * 1024) << " MiB  smem/block " << d.smem_per_block_optin
                << " B  driver " << d.driver_version << "  runtime " << d.runtime_version << "\n";
    return 0;
  };
});
}  // namespace
}  // namespace flashprobe::cli
