// The AMD hardware executors: the probe engine's Executor interface (executor.h) on top of
// run_amd_atom_experiments (run.h), one per AMD atom of the engine's registry. Compiled into
// flashprobe_probes in the hip tree only (probes/CMakeLists.txt), where register_amd_executors() is
// called by register_hardware_executors().
//
// A factory declines, with the reason, when there is no AMD GPU or the GPU's architecture lacks the
// instruction, so `flashprobe probe --all` on a machine without an AMD GPU skips every AMD atom
// with that reason and exits 0.
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/probes/amd/atoms.h"
#include "flashprobe/probes/amd/run.h"
#include "flashprobe/probes/executor.h"

namespace flashprobe::probes {
namespace {

// The full gcnArchName ("gfx942:sramecc+:xnack-"): DeviceInfo::arch drops the feature suffixes,
// but a record of a hardware result should name exactly what ran it.
std::string gcn_arch_name(int device) {
#if defined(FP_VENDOR_HIP)
  fp_rt::DeviceProp p{};
  FP_CHECK(fp_rt::get_device_properties(&p, device));
  return p.gcnArchName;
#else
  (void)device;
  return "?";
#endif
}

std::vector<float> to_floats(const std::vector<double>& v, const std::string& atom, char operand) {
  std::vector<float> f(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    f[i] = static_cast<float>(v[i]);
    if (!(static_cast<double>(f[i]) == v[i]) && !(std::isnan(v[i]) && std::isnan(f[i]))) {
      std::ostringstream s;
      s << atom << ": operand " << operand << " value " << v[i] << " at flat index " << i
        << " is not exact in float (the AMD experiment kernels read float)";
      throw std::invalid_argument(s.str());
    }
  }
  return f;
}

class AmdExecutor : public Executor {
 public:
  AmdExecutor(const amd::AmdAtomShape& shape, DeviceInfo dev, std::string gcn)
      : shape_(shape), dev_(std::move(dev)), gcn_(std::move(gcn)) {}
  std::string source() const override { return "hardware"; }
  std::string description() const override {
    return dev_.name + " (gcnArchName " + gcn_ + "), " + std::string(shape_.instruction) + " via " +
           std::string(shape_.builtin) + (shape_.opsel >= 0 ? (shape_.opsel ? " OPSEL high" : " OPSEL low") : "");
  }
  // 16384 experiments of the largest AMD atom (64 lanes x 16 slots, 4 operands) are 64 MiB of float.
  int max_batch() const override { return 16384; }
  void run(const FragmentBatch& batch, std::vector<double>& d) override {
    const std::string name(shape_.name);
    if (batch.wave != shape_.wave || batch.a_slots != shape_.a_slots || batch.b_slots != shape_.b_slots ||
        batch.c_slots != shape_.c_slots)
      throw std::invalid_argument(name + ": batch shape does not match the atom (wave, slots)");
    const auto out = amd::run_amd_atom_experiments(shape_.name, batch.count, to_floats(batch.a_data, name, 'A'),
                                                   to_floats(batch.b_data, name, 'B'),
                                                   to_floats(batch.c_data, name, 'C'));
    d.assign(out.begin(), out.end());
  }

 private:
  const amd::AmdAtomShape& shape_;
  DeviceInfo dev_;
  std::string gcn_;
};

std::unique_ptr<Executor> make_amd_executor(const AtomDesc& atom, std::string& why_not) {
  const amd::AmdAtomShape* shape = amd::find_amd_atom(atom.name);
  if (!shape) {
    why_not = "no AMD experiment kernel is named " + atom.name;
    return nullptr;
  }
  if (shape->wave != atom.wave || shape->a_slots != atom.a_slots || shape->b_slots != atom.b_slots ||
      shape->c_slots != atom.c_slots) {
    why_not = atom.name + ": the AMD kernel's wave/slots disagree with the registry (a bug: see test_probes_amd)";
    return nullptr;
  }
  const DeviceQuery q = query_devices();
  if (q.devices.empty()) {
    why_not = "no AMD GPU (" + q.reason + ")";
    return nullptr;
  }
  const DeviceInfo& dev = q.devices.front();
  if (dev.vendor != "amd" || !amd::amd_atom_runs_on(*shape, dev.arch)) {
    why_not = std::string(shape->instruction) + " does not exist on " + dev.arch + " (" + dev.name +
              "); it runs on " + amd::amd_targets_text(*shape);
    return nullptr;
  }
  return std::make_unique<AmdExecutor>(*shape, dev, gcn_arch_name(dev.index));
}

}  // namespace

void register_amd_executors() {
  for (const AtomDesc& atom : mma_atoms())
    if (atom.vendor == Vendor::amd) register_executor(atom.name, make_amd_executor);
}

}  // namespace flashprobe::probes
