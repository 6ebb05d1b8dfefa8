#pragma once
// Kernels built for one architecture (wgmma: sm_90) refuse every problem on other devices; GPU
// tests then skip with the kernel's own reason. The question is asked with a plain problem every
// kernel of the table takes on its devices (one batch and head, 128 x 128, d = 64, f16).
#include <string>

#include "flashprobe/core/problem.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::testing {

// Empty when `k` runs on `dev`, else why not (the kernel's supports() reason).
inline std::string refusal_on_device(const kernels::KernelInfo& k, const DeviceInfo& dev) {
  AttnProblem plain;
  plain.sq = plain.sk = 128;
  plain.d = plain.dv = 64;
  plain.dtype = plain.out_dtype = DType::f16;
  const kernels::Support s = k.supports(dev, plain);
  return s ? std::string() : s.reason;
}

}  // namespace flashprobe::testing
