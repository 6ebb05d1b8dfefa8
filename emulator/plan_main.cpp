// flashprobe_amd_plan --problem p.json --family gfx11|gfx12|cdna: the AMD mma kernel's launch for a
// problem as JSON (kernels/src/mma/mma_amd_plan.h): the instantiation, grid, block and the bytes of
// its Params argument with the offsets of the pointer fields, for the emulator harness
// (emulator/amdemu/attention.py), which has no HIP runtime to do this. Exit 2 on a problem the
// kernel refuses, naming why.
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

int main(int argc, char** argv) {
  std::string problem, family;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--problem") problem = argv[i + 1];
    else if (a == "--family") family = argv[i + 1];
    else {
      std::cerr << "flashprobe_amd_plan: unknown option " << a << " (allowed: --problem FILE --family gfx11|gfx12|cdna)\n";
      return 2;
    }
  }
  if (problem.empty() || family.empty() || argc != 5) {
    std::cerr << "usage: flashprobe_amd_plan --problem FILE --family gfx11|gfx12|cdna\n";
    return 2;
  }
  try {
    flashprobe::AttnProblem p;
    from_json(flashprobe::read_json_file(problem), p);
    const auto plan = flashprobe::kernels::amd_mma_plan(p, family);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&plan.params);
    std::string hex;
    for (std::size_t i = 0; i < sizeof(plan.params); ++i) {
      char b[3];
      std::snprintf(b, sizeof b, "%02x", bytes[i]);
      hex += b;
    }
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
