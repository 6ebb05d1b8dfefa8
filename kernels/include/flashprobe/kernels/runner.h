#pragma once
// The host runner used by tests, property tests and benchmarks: one call runs one kernel on one
// problem with every check a harness wants and nothing a kernel could hide behind.
//
//   1. uploads Q/K/V (and ALiBi slopes, per-batch key lengths) into guarded DeviceBuffers;
//   2. poisons O, LSE and the workspace with 0xFF (NaN in every float type);
//   3. launches, checks the last error, synchronizes;
//   4. downloads O and LSE into AttnOutputs;
//   5. reports guard-band damage of every buffer, inputs the kernel modified, and every output
//      element still holding the poison pattern (never written: empty rows must write O = 0 and
//      LSE = -inf, so "still poison" is always a bug).
//
// Example:
//   RunResult r = run_kernel(*find_kernel("tiled"), p, random_inputs(p, 7));
//   if (!r.clean()) FAIL() << r.describe();
//   auto check = oracle::check(p, in, r.out);
#include <cstdint>
#include <string>
#include <vector>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/registry.h"

namespace flashprobe::kernels {

struct RunOptions {
  bool check_supported = true;        // refuse (UsageError with the reason) what supports() refuses
  bool check_inputs_unchanged = true; // download Q/K/V after the run and compare bitwise
};

struct RunResult {
  AttnOutputs out;
  std::vector<std::string> guard_damage;     // "o: 2 byte(s) written after the buffer, ..."
  std::vector<std::string> inputs_modified;  // "k: 12 element(s) changed, first at element 40"
  std::int64_t o_unwritten = 0;              // logical O elements still holding the poison bits
  std::int64_t lse_unwritten = 0;
  std::string first_unwritten;               // "o[b=0,i=3,h=1,x=7]" or "lse[b=0,h=1,i=3]"
  std::size_t workspace_bytes = 0;
  // Host wall time of the run's parts: allocate, upload and poison; launch until the device is idle;
  // download and every check (poison scan, guard bands, inputs unchanged). Seconds.
  double upload_s = 0, device_s = 0, download_s = 0;
  bool clean() const {
    return guard_damage.empty() && inputs_modified.empty() && o_unwritten == 0 && lse_unwritten == 0;
  }
  std::string describe() const;  // "clean" or every finding, one per line
};

// @throws NoDevice without a GPU; UsageError for an invalid or unsupported problem (with reason);
//         GpuError when a launch or runtime call fails.
RunResult run_kernel(const KernelInfo& kernel, const AttnProblem& p, const AttnInputs& in,
                     const RunOptions& opt = {});

// The problem's ALiBi slopes (converted to f32, as kernels read them) and per-batch key lengths on
// the device, for DeviceTensors::alibi_slopes / seqlens_k; a buffer stays empty (as<...>() null)
// where the problem has none. The runner and `flashprobe bench` upload them this way.
struct MaskInputs {
  DeviceBuffer alibi, seqlens;
};
MaskInputs upload_mask_inputs(const AttnProblem& p);

// Poison-pattern helpers (host, CPU-tested): how many logical elements of O / LSE still hold 0xFF bits.
// Whether element i of t still holds the poison bytes.
bool is_poison(const Tensor& t, std::int64_t i);
std::int64_t count_unwritten_o(const AttnProblem& p, const Tensor& o, std::string* first = nullptr);
std::int64_t count_unwritten_lse(const AttnProblem& p, const std::vector<float>& lse, std::string* first = nullptr);

}  // namespace flashprobe::kernels
