#pragma once
// The atom: one matrix instruction on one target, as data. Kernels, probes and tests read the same
// descriptor; the device function that executes it lives with the vendor code (probes/nvidia,
// probes/amd) and reaches the engine through an Executor (executor.h).
//
//   const AtomDesc* a = find_atom("GFX11_WMMA_16x16x16_F32F16_W32");
//   a->m, a->n, a->k          16, 16, 16
//   a->wave, a->a_slots       32 lanes, 16 f16 elements of A per lane (8 VGPRs, two per register)
//   a->expected->a            lanes 16..31 replicate lanes 0..15 (required by the RDNA3 ISA)
//   a->source.text()          "AMD RDNA3 ISA Reference Guide, section 7.9 ..."
//
// Names follow CuTe: SM80_16x8x16_F32F16F16F32_TN (arch, MxNxK, D A B C types, A/B majorness),
// GFX11_WMMA_16x16x16_F32F16_W32 (target family, instruction, shape, D and input type, wave size),
// CDNA_MFMA_32x32x8_F32F16.
//
// Load paths (ldmatrix, wmma::load_matrix_sync) are atoms too (LoadAtomDesc): one operand, memory
// (row, col) -> (lane, slot), probed by loading an encoded matrix (load_path.h).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashprobe/probes/elem_type.h"
#include "flashprobe/probes/layout.h"

namespace flashprobe::probes {

enum class Vendor { nvidia, amd };
std::string_view vendor_name(Vendor v);

// Where an expected layout comes from. Empty title = "none documented".
struct Source {
  std::string title;    // "NVIDIA PTX ISA 8.5"
  std::string section;  // "9.7.13.4.8 Matrix Fragments for mma.m16n8k16 with floating point type"
  bool documented() const { return !title.empty(); }
  std::string text() const;  // "title, section" or "none documented"
};

struct AtomDesc {
  std::string name;
  Vendor vendor = Vendor::nvidia;
  std::vector<std::string> targets;  // "sm_80", "sm_90a", "gfx1100", "gfx942", ...
  int m = 0, n = 0, k = 0;
  ElemType a_type = ElemType::f16, b_type = ElemType::f16, c_type = ElemType::f32;  // c_type: C and D
  int wave = 32;  // threads taking part: 32 or 64; 128 for a wgmma warpgroup
  int a_slots = 0, b_slots = 0, c_slots = 0;  // elements per lane (slot = element index in the fragment)
  std::optional<MmaLayout> expected;          // nullopt: no document gives one
  Source source;
  std::string notes;  // replication requirements, OPSEL, staging conventions, confidence
};

struct LoadAtomDesc {
  std::string name;
  Vendor vendor = Vendor::nvidia;
  std::vector<std::string> targets;
  int rows = 0, cols = 0;  // the matrix in memory that one instruction loads
  ElemType type = ElemType::f16;
  int wave = 32, slots = 0;
  std::optional<OperandLayout> expected;  // (lane, slot) -> memory (row, col)
  Source source;
  std::string notes;  // e.g. which lanes supply the row addresses
};

// Every atom flashprobe knows (from expected_*.cpp), in a fixed order; names are unique.
const std::vector<AtomDesc>& mma_atoms();
const std::vector<LoadAtomDesc>& load_atoms();
const AtomDesc* find_mma_atom(std::string_view name);
const LoadAtomDesc* find_load_atom(std::string_view name);
std::vector<std::string> atom_names();  // mma atoms, then load atoms

// Checks a descriptor against its own expected layout (shapes, slots, coverage): empty when sound.
std::vector<std::string> validate(const AtomDesc& a);
std::vector<std::string> validate(const LoadAtomDesc& a);

}  // namespace flashprobe::probes
