// The one place that knows which vendor executors this build contains. probes/CMakeLists.txt defines
// FLASHPROBE_PROBES_NVIDIA when it compiles probes/nvidia/*.cu (cuda tree) and FLASHPROBE_PROBES_AMD
// for probes/amd/*.cu (hip tree); each folder defines its register_*_executors(). Calling them from
// here keeps their object files in the link (static-init registration would be dropped).
#include <mutex>

#include "flashprobe/probes/executor.h"

namespace flashprobe::probes {

void register_hardware_executors() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(FLASHPROBE_PROBES_NVIDIA)
    register_nvidia_executors();
#endif
#if defined(FLASHPROBE_PROBES_AMD)
    register_amd_executors();
#endif
  });
}

}  // namespace flashprobe::probes
