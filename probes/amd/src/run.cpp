// Host entry point for AMD atom experiments: checks, device buffers, launch, readback. The kernels
// themselves are in probes/amd/*.cu; builds without the HIP backend keep only the checks.
#include <algorithm>
#include <array>
#include <string>

#include "flashprobe/core/buffer.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/vendor.h"
#include "flashprobe/probes/amd/run.h"
#if defined(FP_VENDOR_HIP)
#include "flashprobe/probes/amd/launchers.h"
#endif

namespace flashprobe::probes::amd {
namespace {

std::string known_atoms() {
  std::string s;
  for (const auto& a : kAmdAtoms) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

void check_operand(const AmdAtomShape& atom, char which, std::span<const float> v, int experiments, int slots,
                   AmdElem elem) {
  const std::size_t want = static_cast<std::size_t>(experiments) * atom.wave * slots;
  if (v.size() != want)
    throw UsageError(std::string(atom.name) + ": operand " + which + " has " + std::to_string(v.size()) +
                     " values, expected " + std::to_string(want) + " (experiments " + std::to_string(experiments) +
                     " x lanes " + std::to_string(atom.wave) + " x slots " + std::to_string(slots) + ")");
  if (auto bad = first_inexact(elem, v))
    throw UsageError(std::string(atom.name) + ": operand " + which + " " + *bad +
                     "; the probe sends only values the element type holds exactly");
}

#if defined(FP_VENDOR_HIP)
DeviceLaunchFn find_launcher(std::string_view name) {
  for (auto table : {rdna3_wmma_w32_launchers(), rdna3_wmma_w64_launchers(), rdna4_wmma_w32_launchers(),
                     rdna4_wmma_w64_launchers(), cdna_mfma_launchers()})
    for (const auto& l : table)
      if (l.name == name) return l.launch;
  return nullptr;
}
#endif

}  // namespace

bool amd_runtime_built() {
#if defined(FP_VENDOR_HIP)
  return true;
#else
  return false;
#endif
}

std::vector<float> run_amd_atom_experiments(std::string_view name, int experiments, std::span<const float> a,
                                            std::span<const float> b, std::span<const float> c) {
  const AmdAtomShape* atom = find_amd_atom(name);
  if (!atom) throw UsageError("unknown AMD atom '" + std::string(name) + "' (known: " + known_atoms() + ")");
  if (experiments < 0) throw UsageError(std::string(name) + ": negative experiment count " + std::to_string(experiments));
  check_operand(*atom, 'A', a, experiments, atom->a_slots, atom->a_in);
  check_operand(*atom, 'B', b, experiments, atom->b_slots, atom->b_in);
  check_operand(*atom, 'C', c, experiments, atom->c_slots, atom->acc);
#if !defined(FP_VENDOR_HIP)
  throw NoDevice("AMD atoms need the HIP build (cmake --preset hip-user); this build's backend cannot run " +
                 std::string(name));
#else
  const DeviceInfo dev = require_device();
  if (dev.vendor != "amd" || !amd_atom_runs_on(*atom, dev.arch))
    throw UsageError(std::string(name) + " (" + std::string(atom->instruction) + ") does not exist on " + dev.arch +
                     " (" + dev.name + "); it runs on: " + amd_targets_text(*atom));
  const DeviceLaunchFn launch = find_launcher(name);
  if (!launch) throw UsageError(std::string(name) + ": no experiment kernel compiled into this build");
  std::vector<float> d(static_cast<std::size_t>(experiments) * atom->wave * atom->c_slots);
  if (experiments == 0) return d;
  DeviceBuffer da(a.size_bytes()), db(b.size_bytes()), dc(c.size_bytes()), dd(d.size() * sizeof(float));
  da.upload({reinterpret_cast<const std::uint8_t*>(a.data()), a.size_bytes()});
  db.upload({reinterpret_cast<const std::uint8_t*>(b.data()), b.size_bytes()});
  dc.upload({reinterpret_cast<const std::uint8_t*>(c.data()), c.size_bytes()});
  launch(experiments, da.as<float>(), db.as<float>(), dc.as<float>(), dd.as<float>());
  FP_CHECK_LAUNCH(atom->name);
  FP_CHECK(fp_rt::device_synchronize());
  if (auto damage = dd.guard_damage())
    throw std::runtime_error(std::string(name) + ": the experiment kernel wrote outside D: " + damage->describe());
  d = dd.download_as<float>();
  return d;
#endif
}

}  // namespace flashprobe::probes::amd
