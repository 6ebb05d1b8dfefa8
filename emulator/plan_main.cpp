// flashprobe_amd_plan --problem p.json --family gfx11|gfx12|cdna [--pass backward]: the AMD mma
// kernel's launch for a problem as JSON (kernels/src/mma/mma_amd_plan.h): the instantiation, grid,
// block and the bytes of its Params argument with the offsets of the pointer fields, for the emulator
// harness (emulator/amdemu/attention.py), which has no HIP runtime to do this. --pass backward: the
// AMD backward's three launches and its BwdParams instead (mma_bwd_amd_plan.h, amdemu/backward.py).
// Exit 2 on a problem the kernel refuses, naming why.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "flashprobe/core/error.h"
#include "flashprobe/core/problem.h"
#include "flashprobe/core/record.h"
#include "src/mma/mma_amd_plan.h"
#include "src/mma/mma_bwd_amd_plan.h"

namespace {

std::string hex_of(const void* p, std::size_t n) {
  const auto* bytes = static_cast<const unsigned char*>(p);
  std::string hex;
  for (std::size_t i = 0; i < n; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", bytes[i]);
    hex += b;
  }
  return hex;
}

nlohmann::json backward_plan(const flashprobe::AttnProblem& p, const std::string& family) {
  const auto plan = flashprobe::kernels::amd_bwd_plan(p, family);
  const auto& o = plan.pointer_offsets;
  const char* names[] = {"q", "k", "v", "o", "lse", "alibi", "seqlens", "dout", "dq", "dk", "dv", "dvec"};
  nlohmann::json ptr;
  for (std::size_t i = 0; i < o.size(); ++i) ptr[names[i]] = o[i];
  return {{"atom", plan.atom}, {"elem", plan.elem}, {"d", plan.d}, {"tile", plan.tile}, {"waves", plan.waves},
          {"wave_size", plan.wave_size}, {"threads", plan.threads}, {"rowdot_threads", flashprobe::kernels::kAmdBwdRowdotThreads},
          {"grid_rowdot", plan.grid_rowdot}, {"grid_dkdv", plan.grid_dkdv}, {"grid_dq", plan.grid_dq},
          {"params_hex", hex_of(&plan.params, sizeof(plan.params))}, {"pointers", ptr}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string problem, family, pass = "forward";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--problem") problem = argv[i + 1];
    else if (a == "--family") family = argv[i + 1];
    else if (a == "--pass") pass = argv[i + 1];
    else {
      std::cerr << "flashprobe_amd_plan: unknown option " << a
                << " (allowed: --problem FILE --family gfx11|gfx12|cdna [--pass forward|backward])\n";
      return 2;
    }
  }
  if (problem.empty() || family.empty() || argc % 2 != 1 || (pass != "forward" && pass != "backward")) {
    std::cerr << "usage: flashprobe_amd_plan --problem FILE --family gfx11|gfx12|cdna [--pass forward|backward]"
              << (pass != "forward" && pass != "backward" ? " (--pass " + pass + ": allowed forward, backward)" : "") << "\n";
    return 2;
  }
  try {
    flashprobe::AttnProblem p;
    from_json(flashprobe::read_json_file(problem), p);
    if (pass == "backward") {
      std::cout << backward_plan(p, family).dump() << "\n";
      return 0;
    }
    const auto plan = flashprobe::kernels::amd_mma_plan(p, family);
    const std::string hex = hex_of(&plan.params, sizeof(plan.params));
    std::uint32_t rescale_bits = 0;  // -inf (rescale always) has no JSON number: its f32 bits
    std::memcpy(&rescale_bits, &plan.rescale_log2, sizeof rescale_bits);
    const auto& o = plan.pointer_offsets;
    nlohmann::json j = {{"atom", plan.atom},          {"elem", plan.elem},
                        {"d", plan.d},                {"bn", plan.bn},
                        {"waves", plan.waves},        {"wave_size", plan.wave_size},
                        {"grid", plan.grid},          {"threads", plan.threads},
                        {"order", plan.order},        {"rescale_log2_bits", rescale_bits},
                        {"params_hex", hex},
                        {"pointers", {{"q", o[0]}, {"k", o[1]}, {"v", o[2]}, {"o", o[3]}, {"lse", o[4]},
                                      {"alibi", o[5]}, {"seqlens", o[6]}}}};
    std::cout << j.dump() << "\n";
    return 0;
  } catch (const flashprobe::UsageError& e) {
    std::cerr << "flashprobe_amd_plan: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "flashprobe_amd_plan: " << e.what() << "\n";
    return 2;
  }
}
