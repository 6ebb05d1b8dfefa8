#pragma once
// Executors run probe experiments: a simulated CPU atom (simulated.h) or a real instruction on a GPU
// (written per vendor in .cu files). The engine speaks to both through one batched interface.
//
// Device-facing data is deliberately plain: per operand one flat array of doubles laid out
// [experiment][lane][slot]. A GPU executor uploads the batch converted to the operand types (every
// value the engine uses is exact in them: see elem_type.h), runs one experiment per wave (thousands
// per launch), and returns D the same way, converted back to double without rounding.
//
//   FragmentBatch batch(atom, 1000);       // zero-filled
//   batch.a(e)[lane * atom.a_slots + slot] = 1;
//   std::vector<double> d;
//   executor.run(batch, d);                // d[(e * wave + lane) * c_slots + slot]
//
// Hardware executors register by atom name (register_executor). Static-initialisation objects in a
// static library are dropped by the linker when nothing references their object file, so vendor
// code does not rely on them: a vendor folder defines one function that registers all its atoms,
//   probes/nvidia/*.cu (cuda tree):  void flashprobe::probes::register_nvidia_executors();
//   probes/amd/*.cu    (hip tree):   void flashprobe::probes::register_amd_executors();
// and probes/CMakeLists.txt compiles those folders in and defines FLASHPROBE_PROBES_NVIDIA /
// FLASHPROBE_PROBES_AMD, so that register_hardware_executors() (called lazily by the lookups below)
// calls them. Nothing else needs to change to plug an executor in.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/probes/atom.h"

namespace flashprobe::probes {

struct FragmentBatch {
  FragmentBatch() = default;
  FragmentBatch(int experiments, int lanes, int slots_a, int slots_b, int slots_c);
  FragmentBatch(const AtomDesc& atom, int experiments) : FragmentBatch(experiments, atom.wave, atom.a_slots, atom.b_slots, atom.c_slots) {}

  int count = 0, wave = 0, a_slots = 0, b_slots = 0, c_slots = 0;
  std::vector<double> a_data, b_data, c_data;  // [experiment][lane][slot]

  double* a(int e) { return a_data.data() + static_cast<std::size_t>(e) * wave * a_slots; }
  double* b(int e) { return b_data.data() + static_cast<std::size_t>(e) * wave * b_slots; }
  double* c(int e) { return c_data.data() + static_cast<std::size_t>(e) * wave * c_slots; }
  const double* a(int e) const { return a_data.data() + static_cast<std::size_t>(e) * wave * a_slots; }
  const double* b(int e) const { return b_data.data() + static_cast<std::size_t>(e) * wave * b_slots; }
  const double* c(int e) const { return c_data.data() + static_cast<std::size_t>(e) * wave * c_slots; }
  std::size_t d_size() const { return static_cast<std::size_t>(count) * wave * c_slots; }
};

class Executor {
 public:
  virtual ~Executor() = default;
  // "simulated" or "hardware": copied into every record; simulated results are never labelled measured.
  virtual std::string source() const = 0;
  // One line for humans and records: "simulated from the expected layout (replicas: partial)",
  // "NVIDIA H100 sm_90, mma.sync.aligned.m16n8k16".
  virtual std::string description() const = 0;
  // Most experiments one run() accepts (device memory, launch limits); 0 = no limit.
  virtual int max_batch() const { return 0; }
  // @pre batch shapes are the atom's (wave, slots per operand)
  // @post d.size() == batch.d_size(); d[(e * wave + lane) * c_slots + slot] is D of experiment e
  virtual void run(const FragmentBatch& batch, std::vector<double>& d) = 0;
};

// A factory may decline at run time (wrong architecture, no device): it returns nullptr and says why.
using ExecutorFactory = std::function<std::unique_ptr<Executor>(const AtomDesc& atom, std::string& why_not)>;
void register_executor(const std::string& atom_name, ExecutorFactory factory);
// Defined in src/hardware_registration.cpp: calls the vendor registration functions compiled into
// this build (none in the `off` tree). Idempotent; the lookups below call it themselves.
void register_hardware_executors();
bool has_hardware_executor(std::string_view atom_name);
// nullptr with why_not set when this build has no executor for the atom or the factory declines.
std::unique_ptr<Executor> make_hardware_executor(const AtomDesc& atom, std::string& why_not);

// Vendor registration functions (defined only in trees that compile the vendor folder).
void register_nvidia_executors();
void register_amd_executors();

}  // namespace flashprobe::probes
