#pragma once
// Probing real instructions: one atom at a time on the GPU, one record per atom. This is what
// `flashprobe probe NAME | --all` runs; the CPU replay test (tests/probes_nvidia/test_replay.cpp)
// reads the same records back.
//
//   const auto dev = require_device();
//   const auto header = record_header("probe");
//   AtomRun r = probe_on_hardware(*find_mma_atom("SM80_16x8x16_F32F16F16F32_TN"), dev, header, {}, true);
//   r.status == RunStatus::probed, r.ok, std::cout << r.text;
//   write_json_file("probe-" + r.atom + ".json", r.record);
//
// Memory paths. An mma atom whose fragments also have a memory path (nvcuda::wmma: load_matrix_sync
// / store_matrix_sync) registers it (register_memory_paths). The paths give absolute labels and show
// the duplicates that D = mma(A, B, C) cannot see; probe_on_hardware then probes the semantics with
// the memory layout as the expected one (so the labels are the memory's) and reconciles the two:
//   - every path of one operand gives the same layout (C: loaded row- and column-major, stored both);
//   - every slot mma reads holds the element the memory path puts there;
//   - a slot mma does not read (derived ignored) must be a duplicate: its element is held by
//     another slot too. Such slots are listed, per operand, as "duplicates mma does not read".
// For such an atom the recorded "layout" is the memory layout (with its replicas): the declared
// layout is "what the hardware showed", since NVIDIA leaves the wmma element order unspecified.
//
// Failure isolation: every atom runs inside try/catch; an exception becomes a record with status
// "failed" and its message. A device fault that poisons the CUDA context (a trap) cannot be undone
// inside one process, so atoms after it fail too, each with the runtime's message.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashprobe/core/device_info.h"
#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/load_path.h"

namespace flashprobe::probes {

struct OperandPath {
  Operand operand = Operand::A;
  std::string method;  // "load_matrix_sync from row-major memory"
  OperandLayout layout;  // (lane, slot) -> (row, col), absolute
  std::vector<std::string> anomalies;
};
using MemoryPathsFn = std::function<std::vector<OperandPath>(const AtomDesc& atom)>;
void register_memory_paths(const std::string& atom_name, MemoryPathsFn fn);
bool has_memory_paths(std::string_view atom_name);

struct Reconciliation {
  bool ok = false;
  std::vector<std::string> problems;   // disagreements; empty when ok
  std::vector<std::string> notes;      // e.g. "A: 256 slots are duplicates mma does not read: T00V8 ..."
  std::vector<int> unread[3];          // per operand (A, B, C): flat slots mma does not read
};
// The memory layout the paths give: the first path of each operand (nullopt if one is missing).
std::optional<MmaLayout> memory_layout(const AtomDesc& atom, const std::vector<OperandPath>& paths);
// @pre `semantic` was probed with expected = memory_layout(paths) (labels from the memory path).
Reconciliation reconcile(const std::vector<OperandPath>& paths, const MmaLayout& memory, const ProbeResult& semantic);

// Whether a device of this arch can run an atom built for `targets`. NVIDIA: "sm_NN" runs on
// compute capability >= NN; an arch-specific "sm_NNa" only on exactly NN. AMD: the gfx name must be
// listed. `why` says why not.
bool runs_on(const std::vector<std::string>& targets, const DeviceInfo& dev, std::string& why);

enum class RunStatus { probed, skipped, failed };
std::string_view status_name(RunStatus s);

struct AtomRun {
  std::string atom;
  RunStatus status = RunStatus::skipped;
  bool ok = false;          // probed, checks passed, verdict matches / no expected / reconciled
  bool wrong_arch = false;  // skipped: the device's architecture lacks the instruction
  std::string reason;       // skipped or failed: why
  std::string verdict;      // one line: "matches", "differs", "reconciled (memory path = mma)", ...
  std::string text;         // the human report
  nlohmann::json record;    // header + the result (see hardware_probe.cpp for the fields)
  int executor_calls = 0;   // batches the engine sent (each one launch, plus the launchers' own)
  double seconds = 0;
};

// `header` is record_header("probe") made once per run (device, driver, commit, date).
AtomRun probe_on_hardware(const AtomDesc& atom, const DeviceInfo& dev, const nlohmann::json& header,
                          const ProbeOptions& options, bool grids);
AtomRun probe_on_hardware(const LoadAtomDesc& atom, const DeviceInfo& dev, const nlohmann::json& header, bool grids);

}  // namespace flashprobe::probes
