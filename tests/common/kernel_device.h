#pragma once
// Whether a kernel runs on this device: asked with the plainest problem of the kernel's own property
// domain (decode: sq <= 8), and counted as a refusal only when the kernel refuses its whole domain
// there (gate::device_refusal, gate/kernel_domain.h). Kernels built for one
// architecture (wgmma: sm_90) refuse every problem elsewhere; GPU tests then skip with that reason.
#include <string>

#include "flashprobe/gate/kernel_domain.h"

namespace flashprobe::testing {

// Empty when `k` runs on `dev`, else why not (the kernel's supports() reason, about the device).
inline std::string refusal_on_device(const kernels::KernelInfo& k, const DeviceInfo& dev) {
  return gate::device_refusal(k, dev);
}

}  // namespace flashprobe::testing
