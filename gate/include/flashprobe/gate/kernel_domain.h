#pragma once
// A kernel's own property domain and the device check asked with it. Pure host code (built in every
// tree, CPU-tested by test_kernel_domain): which problems the generators draw for a kernel, the
// plainest problem of that domain (the one the device check asks with), and whether a refusal of it
// is about the device.
//
// Example:
//   const Domain d = kernel_domain(*find_kernel("decode"), dev);  // sq <= 8, any head dim
//   const AttnProblem p = probe_problem(d);                       // b1 h1 sq8 sk128 d64 f16
//   if (auto why = device_refusal(k, dev); !why.empty()) GTEST_SKIP() << why;
#include <functional>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/proptests/cases.h"

namespace flashprobe::gate {

using proptests::Case;
using proptests::Domain;

// Long rows (Sk >= kSampledRowsFromKeys, Domain::long_row_odds) are checked on kSampledRows sampled
// query rows (the first, the last and the rows that see no key among them): thousands of keys over
// a few rows keep the gate fast.
inline constexpr int kSampledRowsFromKeys = 1024;
inline constexpr int kSampledRows = 8;

// The generator domain of a kernel: its own supports() as the last word, tile sizes for the edge
// bias. Every dtype the kernel takes (a subject restricts them, subject.h).
Domain kernel_domain(const kernels::KernelInfo& k, const DeviceInfo& dev);

// The plainest problem of a domain: one batch element and head, no mask or other feature,
// sq = min(128, max_sq), sk = min(128, max_sk), d = dv = the first head dim, the first dtype.
// @throws UsageError when the domain lists no head dim or no dtype.
AttnProblem probe_problem(const Domain& d);

// Empty when `k` runs on `dev`; else why not: the kernel's supports() reason for the probe problem
// of its own domain. A refusal counts only when it is about the device: when the kernel also refuses
// every one of `samples` generated problems of its domain there. A kernel that refuses its probe but
// accepts some problem of its domain throws std::logic_error naming both (the probe is wrong, and a
// skip would hide the kernel's suite).
std::string device_refusal(const kernels::KernelInfo& k, const DeviceInfo& dev, int samples = 200);

// A code path of a kernel on a device that its checks must reach, and which problems take it.
struct KernelPath {
  std::string name;  // "class 160/160", "plan half (one-row blocks)", ...
  std::function<bool(const AttnProblem&)> takes;
};
// The paths of k on dev: mma's and wgmma's head-dim tile classes (mma: kMmaFineDimClasses on NVIDIA,
// kMmaDimClasses on AMD and as mma/classes=coarse; wgmma: kWgmmaDimClasses, kWgmmaFineDimClasses as
// wgmma/classes=fine), each only where k takes the class's own (d, dv) on dev; decode's two split
// plans (decode_plan_half: the half wave for one-row blocks, the full wave for blocks of several
// rows). None for other kernels and variants. The grid fails a kernel that runs on the device where
// one of them ran no case (tests/kernels: grid_paths); the ledger counts each property's cases per path
// (time_ledger.h) and the soak fails a kernel x dtype where one ran none (scripts/gpu/soak_summary.py).
std::vector<KernelPath> kernel_paths(const kernels::KernelInfo& k, const DeviceInfo& dev);

}  // namespace flashprobe::gate
