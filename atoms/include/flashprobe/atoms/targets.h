#pragma once
// The targets each atom family runs on: the one list per family that the probe registry
// (probes/src/expected_*.cpp), the AMD experiment launcher (probes/amd), the kernels' family check
// (kernels/src/mma/mma_registry.cpp) and the device-side feature macros (amd_targets.cuh, checked
// against these lists by tests/atoms) all read. Host code; no GPU compiler needed.
//
//   atoms::in(atoms::targets::kGfx11Wmma, "gfx1151") == true
//   atoms::amd_base_arch("gfx942:sramecc+:xnack-") == "gfx942"
#include <array>
#include <string_view>

namespace flashprobe::atoms {

namespace targets {
using namespace std::string_view_literals;
// NVIDIA: mma.sync m16n8k{8,16,32} (sm_80 and later), ldmatrix (sm_75 and later), wgmma (sm_90a).
inline constexpr std::array kSm80MmaSync{"sm_80"sv, "sm_86"sv, "sm_89"sv, "sm_90"sv};
inline constexpr std::array kSm75Ldmatrix{"sm_75"sv, "sm_80"sv, "sm_90"sv};
inline constexpr std::array kSm90aWgmma{"sm_90a"sv};
// AMD RDNA3 and RDNA3.5 (gfx11): v_wmma_*_16x16x16_* with replicated A/B lanes.
inline constexpr std::array kGfx11Wmma{"gfx1100"sv, "gfx1101"sv, "gfx1102"sv, "gfx1103"sv,
                                       "gfx1150"sv, "gfx1151"sv, "gfx1152"sv, "gfx1153"sv};
// AMD RDNA4 (gfx12): v_wmma_*_16x16x16_* without replication.
inline constexpr std::array kGfx12Wmma{"gfx1200"sv, "gfx1201"sv};
// AMD CDNA: the f16 MFMA forms from gfx908, the bf16 "_1k" forms from gfx90a, the fp8 form reading
// FNUZ e4m3 on gfx940/941/942 only (gfx950 reads OCP e4m3: another atom).
inline constexpr std::array kCdnaMfmaF16{"gfx908"sv, "gfx90a"sv, "gfx940"sv, "gfx941"sv, "gfx942"sv, "gfx950"sv};
inline constexpr std::array kCdnaMfmaBf16_1k{"gfx90a"sv, "gfx940"sv, "gfx941"sv, "gfx942"sv, "gfx950"sv};
inline constexpr std::array kCdnaMfmaFp8Fnuz{"gfx940"sv, "gfx941"sv, "gfx942"sv};
}  // namespace targets

// An AMD gcnArchName without its feature suffixes ("gfx942:sramecc+:xnack-" -> "gfx942").
constexpr std::string_view amd_base_arch(std::string_view arch) { return arch.substr(0, arch.find(':')); }

template <std::size_t N>
constexpr bool in(const std::array<std::string_view, N>& list, std::string_view target) {
  for (auto t : list)
    if (t == target) return true;
  return false;
}

}  // namespace flashprobe::atoms
