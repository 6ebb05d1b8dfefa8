#pragma once
// The kernel registry: every attention kernel of this build, callable by name, each described as
// data plus one launch function. The dispatcher (select.h), the runner (runner.h), the tests, the
// property suites and the benchmarks all go through this table; a new kernel (the tensor-core "mma"
// path, say) plugs in by adding one KernelInfo entry, and select() picks it up by name.
//
// Example:
//   const KernelInfo* k = find_kernel("tiled");
//   if (Support s = k->supports(device, problem); !s) std::cerr << s.reason;   // "d=72: tiled ..."
//   std::size_t ws = k->workspace_bytes(problem);
//   k->launch(problem, device_tensors, workspace, stream);   // asynchronous on `stream`
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/kernels/head_dim_classes.h"
#include "flashprobe/kernels/params.h"

namespace flashprobe::kernels {

// The stream type of the active backend; in a build without GPU backend launches throw NoDevice.
#ifdef FP_HAVE_GPU_RUNTIME
using Stream = fp_rt::Stream;
#else
using Stream = void*;
#endif

// Whether a kernel can run a problem on a device; when not, `reason` names the field and value
// ("d=72: tiled is built for d in {64, 80, 96, 128, 256}").
struct Support {
  bool ok = true;
  std::string reason;
  explicit operator bool() const { return ok; }
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  // No when p has an error ("invalid problem: <field>: <message>", the first of problem_errors(p)),
  // else yes: the first check of every kernel's supports().
  static Support valid(const AttnProblem& p);
};

struct KernelInfo {
  std::string name;
  std::string description;
  std::function<Support(const DeviceInfo&, const AttnProblem&)> supports;
  std::function<std::size_t(const AttnProblem&)> workspace_bytes;
  // Enqueue the kernel(s) on `stream`; checks every launch (FP_CHECK_LAUNCH), does not synchronize.
  // @pre supports(device, p); workspace holds workspace_bytes(p) bytes (any content: kernels never
  //      read workspace they did not write in the same call).
  std::function<void(const AttnProblem&, const DeviceTensors&, void* workspace, Stream)> launch;
  // Kernels that split a row's keys over blocks (decode): the same kernel with exactly `splits`
  // splits (>= 1), so that tests force 1, odd and more-splits-than-keys counts. Empty otherwise.
  std::function<KernelInfo(int splits)> with_splits{};
};

// Every production kernel of this build (the dispatcher's order of preference is select.h's, not
// this table's).
const std::vector<KernelInfo>& kernels();
// The kernel of that name, or nullptr.
const KernelInfo* find_kernel(const std::string& name);
// "ref3pass, tiled, decode": for error messages.
std::string kernel_names();

// Decode's key split: how many blocks share the keys of one query row, decode_plan_splits()
// (decode_plan.h) for the SM count of this process's device. Exposed so tests can force 1, odd and
// more-splits-than-keys counts through decode_with_splits().
int decode_default_splits(const AttnProblem& p);
// decode/plan=full's count (variants.h): decode_splits() (one full wave) for this process's device.
int decode_default_full_wave_splits(const AttnProblem& p);
// decode/fused=on's plan for this process's device (variants.h): decode_fused_splits() and, for a
// split count, decode_walk() (decode_plan.h).
int decode_default_fused_splits(const AttnProblem& p);
int decode_default_walk(const AttnProblem& p, int splits);
// decode/mma=on's count for this process's device (variants.h): decode_mma_splits() (decode_plan.h).
int decode_default_mma_splits(const AttnProblem& p);
// A KernelInfo running decode with exactly `splits` splits (>= 1), named "decode/splits=<n>".
KernelInfo decode_with_splits(int splits);
// The wgmma kernel's persistent grid capped at `blocks` blocks (>= 1), named "wgmma/blocks=<n>": with
// few blocks every block walks many row blocks, which small test problems would not otherwise make
// it do (the default grid has one block per SM, never more than there are work items).
KernelInfo wgmma_with_blocks(int blocks);

// Limits of the paths, shared by supports() and the tests.
inline constexpr int kDecodeMaxSq = 8;    // decode is for generation steps; beyond this tiled and mma win
inline constexpr int kDecodeMaxDim = 256; // a key row is read by at most 32 lanes of 16 bytes
inline constexpr int kTiledDims[] = {64, 80, 96, 128, 256};
inline constexpr int kMaxGridYZ = 65535;  // grid.y/z limit shared by CUDA and HIP

// wgmma's TMA addresses rows at 16-byte granularity: every stride but the dims' (1) is a multiple of
// this many elements (f16/bf16). Its supports() refuses others; its gate domain draws only these.
inline constexpr int kWgmmaStrideAlign = 8;

}  // namespace flashprobe::kernels
