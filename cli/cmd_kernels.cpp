// flashprobe select: which kernel the dispatcher picks for a problem (and why the others were
// passed over), on this machine's GPU or on a named architecture. Also fills the "kernels" and
// "mutants" sections of `flashprobe list`.
//
//   flashprobe select problem.json                  # this GPU
//   flashprobe select problem.json --arch gfx1100   # what an AMD RDNA3 build would need
//   flashprobe select problem.json --backward [--deterministic]   # the backward kernel instead
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "command.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/problem_io.h"
#include "flashprobe/core/record.h"
#include "flashprobe/kernels/backward.h"
#include "flashprobe/kernels/mutant_catalogue.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/select.h"

namespace flashprobe::cli {
namespace {

ListSectionRegistration kernels_section("kernels", [] {
  std::vector<std::string> v;
  for (auto& k : kernels::kernels()) v.push_back(k.name + ": " + k.description);
  for (auto& k : kernels::backward_kernels()) v.push_back(k.name + " (backward): " + k.description);
  return v;
});

ListSectionRegistration mutants_section("mutants", [] {
  std::vector<std::string> v;
  for (auto& m : kernels::mutant_catalogue())
    v.push_back(m.name + " (" + m.kernel + "): " + m.description + " [killed by: " + m.killed_by + "]");
  return v;
});

CommandRegistration reg("select", [](CLI::App& app) -> RunFn {
  auto* sub = app.add_subcommand("select", "Show which kernel the dispatcher picks for a problem, and why");
  auto file = std::make_shared<std::string>();
  auto arch = std::make_shared<std::string>();
  auto backward = std::make_shared<bool>(false), deterministic = std::make_shared<bool>(false);
  sub->add_option("problem", *file, "Problem JSON file (the AttnProblem fields)")->required();
  sub->add_option("--arch", *arch, "Judge for this architecture (sm_90, gfx1100, ...) instead of this machine's GPU");
  sub->add_flag("--backward", *backward, "Pick the backward kernel (dQ, dK, dV) instead of the forward's");
  sub->add_flag("--deterministic", *deterministic, "With --backward: only a deterministic kernel (no float atomics)");
  return [file, arch, backward, deterministic] {
    if (*deterministic && !*backward) throw UsageError("--deterministic applies to --backward only");
    const AttnProblem p = read_problem_file(*file);  // errors name the file, the field and the value
    DeviceInfo dev;
    if (arch->empty()) {
      dev = require_device();
    } else {
      const bool nv = arch->rfind("sm_", 0) == 0, amd = arch->rfind("gfx", 0) == 0;
      if (!nv && !amd) throw UsageError("--arch '" + *arch + "' is not an sm_NN or gfxNNNN name");
      dev.arch = *arch;
      dev.vendor = nv ? "nvidia" : "amd";
      // wave32 for NVIDIA and RDNA (gfx10+), wave64 for CDNA/GCN.
      dev.wave_size = nv || arch->rfind("gfx1", 0) == 0 ? 32 : 64;
    }
    if (*backward) {
      const kernels::BackwardSelection s = kernels::select_backward(dev, p, *deterministic);
      std::cout << p.id() << " on " << dev.arch << " (backward):\n" << s.describe() << "\n";
      return s ? 0 : 1;
    }
    const kernels::Selection s = kernels::select(dev, p);
    std::cout << p.id() << " on " << dev.arch << ":\n" << s.describe() << "\n";
    return s ? 0 : 1;
  };
});

}  // namespace
}  // namespace flashprobe::cli
