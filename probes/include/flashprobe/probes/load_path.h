#pragma once
// Load-path probing: memory (row, col) -> (lane, slot) for instructions that move a matrix from
// memory into registers (ldmatrix, wmma::load_matrix_sync, a kernel's own shared-memory loader).
// Unlike D = mma(A, B, C), a load gives absolute labels: every element of the loaded matrix carries
// a distinct exact value that names its (row, col).
//
//   auto mem = load_encoding(atom);          // rows*cols values, row-major; all distinct, nonzero
//   device: zero the fragments, load `mem` with the instruction in one wave, write the fragments
//           back as [lane][slot] doubles
//   LoadProbeResult r = infer_load_path(atom, fragments);
//
// A fragment slot still 0 afterwards is ignored (the load did not write it); a slot holding a value
// of the encoding is that element (several slots with one value are duplicates, kept as replicas);
// any other value is an anomaly. The store direction (wmma::store_matrix_sync) is the mirror image:
// store_encoding() gives fragment values, infer_store_path() reads the stored matrix back.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/engine.h"
#include "flashprobe/probes/layout.h"

namespace flashprobe::probes {

class LoadExecutor {
 public:
  virtual ~LoadExecutor() = default;
  virtual std::string source() const = 0;  // "simulated" or "hardware"
  virtual std::string description() const = 0;
  // @pre memory.size() == rows * cols (row-major); @post fragments.size() == wave * slots
  virtual void run(const std::vector<double>& memory, std::vector<double>& fragments) = 0;
};

struct LoadProbeResult {
  std::string atom, source, executor;
  OperandLayout derived;             // (lane, slot) -> memory (row, col); absolute labels
  Verdict verdict = Verdict::no_expected;
  std::vector<SlotDiff> diff;
  std::vector<std::string> anomalies;
  std::vector<Coord> unloaded;       // memory elements no slot received
  double seconds = 0;
  bool ok() const {
    return anomalies.empty() && unloaded.empty() && (verdict == Verdict::matches || verdict == Verdict::no_expected);
  }
};

std::vector<double> load_encoding(const LoadAtomDesc& atom);
LoadProbeResult infer_load_path(const LoadAtomDesc& atom, const std::vector<double>& fragments);
LoadProbeResult probe_load(const LoadAtomDesc& atom, LoadExecutor& ex);

std::vector<double> store_encoding(const LoadAtomDesc& atom);  // per (lane, slot), lane-major
// Memory (row-major) after storing store_encoding() -> which (lane, slot) each element came from.
OperandLayout infer_store_path(const LoadAtomDesc& atom, const std::vector<double>& memory,
                               std::vector<std::string>& anomalies);

// A CPU load driven by a layout table: fragment (lane, slot) = memory at its (row, col); ignored slots 0.
class SimulatedLoader : public LoadExecutor {
 public:
  explicit SimulatedLoader(OperandLayout layout) : layout_(std::move(layout)) {}
  std::string source() const override { return "simulated"; }
  std::string description() const override { return "simulated load on the CPU from a layout table"; }
  void run(const std::vector<double>& memory, std::vector<double>& fragments) override;

 private:
  OperandLayout layout_;
};

void to_json(nlohmann::json& j, const LoadProbeResult& r);
std::string report(const LoadProbeResult& r, bool with_grids);

// Hardware load executors register by load-atom name, as mma executors do (executor.h): the vendor
// registration function adds them; a factory may decline (no device, wrong arch) and say why.
using LoadExecutorFactory =
    std::function<std::unique_ptr<LoadExecutor>(const LoadAtomDesc& atom, std::string& why_not)>;
void register_load_executor(const std::string& atom_name, LoadExecutorFactory factory);
bool has_hardware_load_executor(std::string_view atom_name);
std::unique_ptr<LoadExecutor> make_hardware_load_executor(const LoadAtomDesc& atom, std::string& why_not);

}  // namespace flashprobe::probes
