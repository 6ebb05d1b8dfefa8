#pragma once
// Running AMD atom experiments on the current HIP device, from plain C++ (no HIP headers needed).
//
//   const auto d = run_amd_atom_experiments("GFX11_WMMA_16x16x16_F32F16_W32", n, a, b, c);
//   // a: n*32*16 floats [experiment][lane][slot], b likewise, c: n*32*8; d: n*32*8
//
// Every operand value must be exactly representable in the atom's element type (f16, bf16, FNUZ
// fp8; C in the accumulator type): the probe must see what the instruction does, not a rounding on
// the way in. Errors:
//   UsageError  unknown atom, wrong array sizes, a value the element type cannot hold exactly, or an
//               atom whose instruction the device's architecture lacks (names the arch);
//   NoDevice    no AMD GPU, or a build without the HIP backend (the message says which);
//   GpuError    the launch failed (e.g. no code object for this GPU: rebuild with its gfx target).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/probes/amd/atoms.h"

namespace flashprobe::probes::amd {

std::vector<float> run_amd_atom_experiments(std::string_view atom, int experiments, std::span<const float> a,
                                            std::span<const float> b, std::span<const float> c);

// Whether this build can run AMD atoms at all (the HIP backend); a device is a separate question.
bool amd_runtime_built();

// The first operand value that `elem` cannot hold exactly, as "index i: value v", or nothing.
std::optional<std::string> first_inexact(AmdElem elem, std::span<const float> values);
// `x` rounded to the nearest value of `elem` (ties to even), as float.
float round_to_elem(AmdElem elem, float x);

}  // namespace flashprobe::probes::amd
