#pragma once
// The NVIDIA configurations that have an atom in the engine's registry (expected_nvidia.cpp), for
// the adapters (engine_executors.cpp) that register them. Host-only.
#include <array>
#include <vector>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/hardware_probe.h"
#include "flashprobe/probes/nvidia/executors.h"

namespace flashprobe::nvidia::detail {

inline constexpr std::array<MmaSyncOp, 4> kMmaSyncOps{MmaSyncOp::m16n8k16_f16, MmaSyncOp::m16n8k16_bf16,
                                                      MmaSyncOp::m16n8k8_f16, MmaSyncOp::m16n8k32_s8};
inline constexpr std::array<LdmatrixConfig, 6> kLdmatrixConfigs{
    LdmatrixConfig{1, false}, LdmatrixConfig{1, true}, LdmatrixConfig{2, false},
    LdmatrixConfig{2, true},  LdmatrixConfig{4, false}, LdmatrixConfig{4, true}};

// wgmma B staging: the engine's [lane][slot] B of one experiment (128 lanes x N/8 slots, element
// e = lane * (N/8) + slot, declared in the registry as B[k = e % 16][n = e / 16]) -> the logical
// row-major [16][N] matrix the launcher takes.
void wgmma_b_logical(const double* staged, int n, float* logical);

// Every shape x {f16, bf16} x A {row, col} x B {row, col}: the 24 SM80_WMMA_* atoms.
std::vector<WmmaConfig> wmma_configs();

// The memory paths of one wmma atom, run on the device: A and B through load_matrix_sync (in the
// atom's majors), the accumulator through load_matrix_sync and store_matrix_sync, row- and
// column-major each. Values are load_encoding()/store_encoding() (load_path.h): distinct, exact.
std::vector<probes::OperandPath> wmma_memory_paths(const WmmaConfig& cfg, const probes::AtomDesc& atom);

}  // namespace flashprobe::nvidia::detail
