#pragma once
// The runner for many cases in one process (the soak, the gate): run_kernel's checks (runner.h) on
// device memory kept across cases instead of allocated, guarded and freed per buffer per case.
//
// One allocation, grown when a case needs more, holds a case's buffers (Q, K, V, O, LSE, workspace,
// ALiBi slopes, per-batch key lengths), each between its own two guard bands. Every case, before
// anything else, poisons the whole used range (0xFF: NaN in every float type) and writes every guard
// band again, so nothing a kernel left behind in an earlier case (outputs, damaged bands) can stand in
// for this case's: a kernel that stops writing O is caught on the case it stops. Q, K and V are
// uploaded from the host or filled in place on the device (kernels/input_fill.h) and read back before
// the launch; after the launch the whole used range comes back in one copy, from which O, LSE, the
// poison count, every guard band and the inputs-unchanged comparison are read on the host. Two
// synchronisations per case; copies go through pinned host memory.
//
// The memory is a DeviceMemory (core/device_memory.h): gpu_memory() on the GPU, host_memory() in CPU
// tests, where kernels are host functions writing through the pointers.
//
// Example:
//   CaseArena arena(gpu_memory());
//   for (const Case& c : cases) {
//     ArenaRun r = run_in_arena(arena, k, dev, c.problem, ArenaInputs::host(in));
//     if (!r.run.clean()) fail(r.run.describe());
//   }
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/device_memory.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"

namespace flashprobe::kernels {

// Where a case's Q, K and V come from: the host's tensors (uploaded), or a fill that writes them in
// place (q, k, v: the arena's poisoned buffers of p's spans), queued on the arena's memory.
struct ArenaInputs {
  const AttnInputs* host = nullptr;
  std::function<void(void* q, void* k, void* v)> fill;
  static ArenaInputs of(const AttnInputs& in) { return {&in, {}}; }
  static ArenaInputs filled(std::function<void(void*, void*, void*)> f) { return {nullptr, std::move(f)}; }
};

class CaseArena {
 public:
  explicit CaseArena(std::unique_ptr<DeviceMemory> mem);
  ~CaseArena();
  CaseArena(const CaseArena&) = delete;
  CaseArena& operator=(const CaseArena&) = delete;

  DeviceMemory& memory() { return *mem_; }
  std::size_t capacity() const { return capacity_; }  // bytes of the device allocation
  int grown() const { return grown_; }                 // allocations made so far

  // Internal to run_in_arena (case_arena.cpp).
  std::uint8_t* device(std::size_t bytes);  // the allocation, grown to at least `bytes`
  std::uint8_t* mirror() const { return mirror_; }    // pinned host copy of the used range
  std::uint8_t* staging(std::size_t bytes);            // pinned host memory for uploads
  std::uint8_t* before(std::size_t bytes);             // pinned host memory for the inputs read back
  const std::uint8_t* band() const { return band_; }  // the guard pattern, pinned

 private:
  std::unique_ptr<DeviceMemory> mem_;
  std::uint8_t* base_ = nullptr;
  std::uint8_t* mirror_ = nullptr;
  std::size_t capacity_ = 0;
  struct Host {
    std::uint8_t* p = nullptr;
    std::size_t n = 0;
  } staging_, before_;
  std::uint8_t* band_ = nullptr;
  int grown_ = 0;
  std::uint8_t* grow_host(Host& h, std::size_t bytes);
};

struct ArenaRun {
  AttnInputs in;  // filled inputs: Q, K, V as read back before the launch (empty for host inputs)
  RunResult run;  // as run_kernel reports it: outputs, guard damage, inputs modified, unwritten
};

// One case: checks, layout, poison and guards, inputs, launch, one copy back, the checks on the host.
// upload_s covers poison, guards, inputs and their read-back; device_s the launch and the copy back;
// download_s the host checks.
// @throws UsageError for an invalid or unsupported problem, inputs that do not match it or a source
//         with neither host inputs nor a fill; std::logic_error when a fill wrote outside Q, K or V;
//         GpuError when a launch or copy fails.
ArenaRun run_in_arena(CaseArena& arena, const KernelInfo& kernel, const DeviceInfo& dev, const AttnProblem& p,
                      const ArenaInputs& src, const RunOptions& opt = {});

}  // namespace flashprobe::kernels
