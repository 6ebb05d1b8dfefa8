#pragma once
// The AMD matrix-instruction atoms as host-visible data: one row per (instruction, wave size,
// OPSEL choice). The device side is the atom module's (flashprobe/atoms/amd_matrix.cuh): one struct
// per row whose `mma` runs the instruction; the experiment kernels (probes/amd/*.cu) read and write
// operands as [experiment][lane][slot] floats with exactly the slot counts given here.
//
// "Slot" is the element index within one lane's fragment as the compiler builtin sees it, e.g. slot
// i of the v16f16 A operand of __builtin_amdgcn_wmma_f32_16x16x16_f16_w32. For the 16-bit
// accumulator forms of gfx11 the C/D fragment is the whole v16f16 (wave32) / v8f16 (wave64):
// OPSEL low computes into the even slots (low halves of the 8/4 VGPRs), OPSEL high into the odd
// slots, and the other half passes C through unchanged (LLVM packs two such WMMAs into one register
// set for exactly this reason, see reviews.llvm.org/D158059).
//
// Example:
//   const AmdAtomShape* s = find_amd_atom("GFX11_WMMA_16x16x16_F32F16_W32");
//   // s->wave == 32, s->a_slots == 16, s->c_slots == 8, s->instruction == "v_wmma_f32_16x16x16_f16"
//   amd_atom_runs_on(*s, "gfx1100") == true;  amd_atom_runs_on(*s, "gfx1201") == false
#include <array>
#include <span>
#include <string>
#include <string_view>

#include "flashprobe/atoms/targets.h"

namespace flashprobe::probes::amd {

enum class AmdElem { f16, bf16, fp8_e4m3fnuz, fp8_e4m3, bf8_e5m2fnuz, bf8_e5m2, f32 };
constexpr std::string_view amd_elem_name(AmdElem e) {
  switch (e) {
    case AmdElem::f16: return "f16";
    case AmdElem::bf16: return "bf16";
    case AmdElem::fp8_e4m3fnuz: return "fp8_e4m3fnuz";
    case AmdElem::fp8_e4m3: return "fp8_e4m3";
    case AmdElem::bf8_e5m2fnuz: return "bf8_e5m2fnuz";
    case AmdElem::bf8_e5m2: return "bf8_e5m2";
    case AmdElem::f32: return "f32";
  }
  return "?";
}

enum class AmdFamily { rdna3, rdna4, cdna };

struct AmdAtomShape {
  std::string_view name;         // CuTe-like: GFX11_WMMA_16x16x16_F32F16_W32
  std::string_view builtin;      // the clang builtin behind mma()
  std::string_view instruction;  // mnemonic in the gfx11/gfx12/gfx90a assembly (gfx94x spelling differs: v_mfma_f32_32x32x8_f16)
  AmdFamily family;
  int wave, m, n, k;
  int a_slots, b_slots, c_slots;  // elements per lane of A, B and C/D as the builtin's vector types
  AmdElem a_in, b_in, acc;  // A and B differ in the mixed fp8/bf8 forms (A first in the mnemonic)
  int opsel;  // gfx11 16-bit accumulators: 0 = low halves (even slots), 1 = high halves; else -1
  // Targets this atom's instruction exists on: one of the atoms' lists (flashprobe/atoms/targets.h).
  std::span<const std::string_view> targets;
};

inline constexpr std::span<const std::string_view> kGfx11{atoms::targets::kGfx11Wmma};
inline constexpr std::span<const std::string_view> kGfx12{atoms::targets::kGfx12Wmma};
inline constexpr std::span<const std::string_view> kMfmaF16{atoms::targets::kCdnaMfmaF16};
inline constexpr std::span<const std::string_view> kMfmaBf16{atoms::targets::kCdnaMfmaBf16_1k};
inline constexpr std::span<const std::string_view> kMfmaFp8{atoms::targets::kCdnaMfmaFp8Fnuz};

// clang-format off
inline constexpr std::array kAmdAtoms = {
    // RDNA3 (gfx11) WMMA: A and B are 16 elements per lane in both wave sizes.
    AmdAtomShape{"GFX11_WMMA_16x16x16_F32F16_W32", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32", "v_wmma_f32_16x16x16_f16", AmdFamily::rdna3, 32, 16, 16, 16, 16, 16, 8, AmdElem::f16, AmdElem::f16, AmdElem::f32, -1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F32BF16_W32", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32", "v_wmma_f32_16x16x16_bf16", AmdFamily::rdna3, 32, 16, 16, 16, 16, 16, 8, AmdElem::bf16, AmdElem::bf16, AmdElem::f32, -1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_LO", "__builtin_amdgcn_wmma_f16_16x16x16_f16_w32", "v_wmma_f16_16x16x16_f16", AmdFamily::rdna3, 32, 16, 16, 16, 16, 16, 16, AmdElem::f16, AmdElem::f16, AmdElem::f16, 0, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI", "__builtin_amdgcn_wmma_f16_16x16x16_f16_w32", "v_wmma_f16_16x16x16_f16", AmdFamily::rdna3, 32, 16, 16, 16, 16, 16, 16, AmdElem::f16, AmdElem::f16, AmdElem::f16, 1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_LO", "__builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32", "v_wmma_bf16_16x16x16_bf16", AmdFamily::rdna3, 32, 16, 16, 16, 16, 16, 16, AmdElem::bf16, AmdElem::bf16, AmdElem::bf16, 0, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_HI", "__builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32", "v_wmma_bf16_16x16x16_bf16", AmdFamily::rdna3, 32, 16, 16, 16, 16, 16, 16, AmdElem::bf16, AmdElem::bf16, AmdElem::bf16, 1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F32F16_W64", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w64", "v_wmma_f32_16x16x16_f16", AmdFamily::rdna3, 64, 16, 16, 16, 16, 16, 4, AmdElem::f16, AmdElem::f16, AmdElem::f32, -1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F32BF16_W64", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w64", "v_wmma_f32_16x16x16_bf16", AmdFamily::rdna3, 64, 16, 16, 16, 16, 16, 4, AmdElem::bf16, AmdElem::bf16, AmdElem::f32, -1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F16F16_W64_OPSEL_LO", "__builtin_amdgcn_wmma_f16_16x16x16_f16_w64", "v_wmma_f16_16x16x16_f16", AmdFamily::rdna3, 64, 16, 16, 16, 16, 16, 8, AmdElem::f16, AmdElem::f16, AmdElem::f16, 0, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_F16F16_W64_OPSEL_HI", "__builtin_amdgcn_wmma_f16_16x16x16_f16_w64", "v_wmma_f16_16x16x16_f16", AmdFamily::rdna3, 64, 16, 16, 16, 16, 16, 8, AmdElem::f16, AmdElem::f16, AmdElem::f16, 1, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL_LO", "__builtin_amdgcn_wmma_bf16_16x16x16_bf16_w64", "v_wmma_bf16_16x16x16_bf16", AmdFamily::rdna3, 64, 16, 16, 16, 16, 16, 8, AmdElem::bf16, AmdElem::bf16, AmdElem::bf16, 0, kGfx11},
    AmdAtomShape{"GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL_HI", "__builtin_amdgcn_wmma_bf16_16x16x16_bf16_w64", "v_wmma_bf16_16x16x16_bf16", AmdFamily::rdna3, 64, 16, 16, 16, 16, 16, 8, AmdElem::bf16, AmdElem::bf16, AmdElem::bf16, 1, kGfx11},
    // RDNA4 (gfx12) WMMA: no replication any more, so A and B shrink to 8 (wave32) / 4 (wave64) per lane.
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32F16_W32", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12", "v_wmma_f32_16x16x16_f16", AmdFamily::rdna4, 32, 16, 16, 16, 8, 8, 8, AmdElem::f16, AmdElem::f16, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32BF16_W32", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12", "v_wmma_f32_16x16x16_bf16", AmdFamily::rdna4, 32, 16, 16, 16, 8, 8, 8, AmdElem::bf16, AmdElem::bf16, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32F16_W64", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12", "v_wmma_f32_16x16x16_f16", AmdFamily::rdna4, 64, 16, 16, 16, 4, 4, 4, AmdElem::f16, AmdElem::f16, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32BF16_W64", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w64_gfx12", "v_wmma_f32_16x16x16_bf16", AmdFamily::rdna4, 64, 16, 16, 16, 4, 4, 4, AmdElem::bf16, AmdElem::bf16, AmdElem::f32, -1, kGfx12},
    // gfx12 OCP fp8: the same slot counts, 8-bit elements (2 registers of A and B in wave32, 1 in wave64).
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E4M3_W32", "__builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12", "v_wmma_f32_16x16x16_fp8_fp8", AmdFamily::rdna4, 32, 16, 16, 16, 8, 8, 8, AmdElem::fp8_e4m3, AmdElem::fp8_e4m3, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E4M3_W64", "__builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w64_gfx12", "v_wmma_f32_16x16x16_fp8_fp8", AmdFamily::rdna4, 64, 16, 16, 16, 4, 4, 4, AmdElem::fp8_e4m3, AmdElem::fp8_e4m3, AmdElem::f32, -1, kGfx12},
    // gfx12 OCP bf8 (e5m2) and the mixed forms: the fp8 registers and layout; the mnemonic names A's type first.
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E5M2_W32", "__builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w32_gfx12", "v_wmma_f32_16x16x16_bf8_bf8", AmdFamily::rdna4, 32, 16, 16, 16, 8, 8, 8, AmdElem::bf8_e5m2, AmdElem::bf8_e5m2, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E4M3E5M2_W32", "__builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w32_gfx12", "v_wmma_f32_16x16x16_fp8_bf8", AmdFamily::rdna4, 32, 16, 16, 16, 8, 8, 8, AmdElem::fp8_e4m3, AmdElem::bf8_e5m2, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E5M2E4M3_W32", "__builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w32_gfx12", "v_wmma_f32_16x16x16_bf8_fp8", AmdFamily::rdna4, 32, 16, 16, 16, 8, 8, 8, AmdElem::bf8_e5m2, AmdElem::fp8_e4m3, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E5M2_W64", "__builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w64_gfx12", "v_wmma_f32_16x16x16_bf8_bf8", AmdFamily::rdna4, 64, 16, 16, 16, 4, 4, 4, AmdElem::bf8_e5m2, AmdElem::bf8_e5m2, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E4M3E5M2_W64", "__builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w64_gfx12", "v_wmma_f32_16x16x16_fp8_bf8", AmdFamily::rdna4, 64, 16, 16, 16, 4, 4, 4, AmdElem::fp8_e4m3, AmdElem::bf8_e5m2, AmdElem::f32, -1, kGfx12},
    AmdAtomShape{"GFX12_WMMA_16x16x16_F32E5M2E4M3_W64", "__builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w64_gfx12", "v_wmma_f32_16x16x16_bf8_fp8", AmdFamily::rdna4, 64, 16, 16, 16, 4, 4, 4, AmdElem::bf8_e5m2, AmdElem::fp8_e4m3, AmdElem::f32, -1, kGfx12},
    // CDNA MFMA (wave64 only). gfx908 has the f16 forms; the bf16 "_1k" forms start with gfx90a;
    // the fp8/bf8 forms with FNUZ encodings exist on gfx940/941/942 only (gfx950 reads OCP fp8/bf8).
    AmdAtomShape{"CDNA_MFMA_32x32x8_F32F16", "__builtin_amdgcn_mfma_f32_32x32x8f16", "v_mfma_f32_32x32x8f16", AmdFamily::cdna, 64, 32, 32, 8, 4, 4, 16, AmdElem::f16, AmdElem::f16, AmdElem::f32, -1, kMfmaF16},
    AmdAtomShape{"CDNA_MFMA_16x16x16_F32F16", "__builtin_amdgcn_mfma_f32_16x16x16f16", "v_mfma_f32_16x16x16f16", AmdFamily::cdna, 64, 16, 16, 16, 4, 4, 4, AmdElem::f16, AmdElem::f16, AmdElem::f32, -1, kMfmaF16},
    AmdAtomShape{"CDNA_MFMA_32x32x8_F32BF16_1K", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_32x32x8bf16_1k", AmdFamily::cdna, 64, 32, 32, 8, 4, 4, 16, AmdElem::bf16, AmdElem::bf16, AmdElem::f32, -1, kMfmaBf16},
    AmdAtomShape{"CDNA_MFMA_16x16x16_F32BF16_1K", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_16x16x16bf16_1k", AmdFamily::cdna, 64, 16, 16, 16, 4, 4, 4, AmdElem::bf16, AmdElem::bf16, AmdElem::f32, -1, kMfmaBf16},
    AmdAtomShape{"CDNA_MFMA_16x16x32_F32E4M3", "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_16x16x32_fp8_fp8", AmdFamily::cdna, 64, 16, 16, 32, 8, 8, 4, AmdElem::fp8_e4m3fnuz, AmdElem::fp8_e4m3fnuz, AmdElem::f32, -1, kMfmaFp8},
    AmdAtomShape{"CDNA_MFMA_32x32x16_F32E4M3", "__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_32x32x16_fp8_fp8", AmdFamily::cdna, 64, 32, 32, 16, 8, 8, 16, AmdElem::fp8_e4m3fnuz, AmdElem::fp8_e4m3fnuz, AmdElem::f32, -1, kMfmaFp8},
    // gfx94x FNUZ bf8 (e5m2) and the mixed forms: the fp8 forms' registers and layouts.
    AmdAtomShape{"CDNA_MFMA_16x16x32_F32E5M2", "__builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8", "v_mfma_f32_16x16x32_bf8_bf8", AmdFamily::cdna, 64, 16, 16, 32, 8, 8, 4, AmdElem::bf8_e5m2fnuz, AmdElem::bf8_e5m2fnuz, AmdElem::f32, -1, kMfmaFp8},
    AmdAtomShape{"CDNA_MFMA_16x16x32_F32E4M3E5M2", "__builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_16x16x32_fp8_bf8", AmdFamily::cdna, 64, 16, 16, 32, 8, 8, 4, AmdElem::fp8_e4m3fnuz, AmdElem::bf8_e5m2fnuz, AmdElem::f32, -1, kMfmaFp8},
    AmdAtomShape{"CDNA_MFMA_16x16x32_F32E5M2E4M3", "__builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8", "v_mfma_f32_16x16x32_bf8_fp8", AmdFamily::cdna, 64, 16, 16, 32, 8, 8, 4, AmdElem::bf8_e5m2fnuz, AmdElem::fp8_e4m3fnuz, AmdElem::f32, -1, kMfmaFp8},
    AmdAtomShape{"CDNA_MFMA_32x32x16_F32E5M2", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8", "v_mfma_f32_32x32x16_bf8_bf8", AmdFamily::cdna, 64, 32, 32, 16, 8, 8, 16, AmdElem::bf8_e5m2fnuz, AmdElem::bf8_e5m2fnuz, AmdElem::f32, -1, kMfmaFp8},
    AmdAtomShape{"CDNA_MFMA_32x32x16_F32E4M3E5M2", "__builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8", "v_mfma_f32_32x32x16_fp8_bf8", AmdFamily::cdna, 64, 32, 32, 16, 8, 8, 16, AmdElem::fp8_e4m3fnuz, AmdElem::bf8_e5m2fnuz, AmdElem::f32, -1, kMfmaFp8},
    AmdAtomShape{"CDNA_MFMA_32x32x16_F32E5M2E4M3", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8", "v_mfma_f32_32x32x16_bf8_fp8", AmdFamily::cdna, 64, 32, 32, 16, 8, 8, 16, AmdElem::bf8_e5m2fnuz, AmdElem::fp8_e4m3fnuz, AmdElem::f32, -1, kMfmaFp8},
};
// clang-format on

constexpr const AmdAtomShape* find_amd_atom(std::string_view name) {
  for (const auto& a : kAmdAtoms)
    if (a.name == name) return &a;
  return nullptr;
}

// Whether the atom's instruction exists on `arch` (a gcnArchName such as "gfx1100" or
// "gfx942:sramecc+:xnack-"; feature suffixes are ignored): membership in the atom's target list.
constexpr bool amd_atom_runs_on(const AmdAtomShape& atom, std::string_view arch) {
  arch = atoms::amd_base_arch(arch);
  for (auto t : atom.targets)
    if (t == arch) return true;
  return false;
}

// The atom's targets, space-separated, for messages.
inline std::string amd_targets_text(const AmdAtomShape& atom) {
  std::string s;
  for (auto t : atom.targets) s += (s.empty() ? "" : " ") + std::string(t);
  return s;
}

}  // namespace flashprobe::probes::amd
