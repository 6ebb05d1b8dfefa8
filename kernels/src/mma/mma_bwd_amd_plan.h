#pragma once
// The AMD tensor-core backward (mma_bwd_amd) as plain host data: its tile constants, and for a problem
// the three launches (row term, dK/dV, dQ) with the bytes of their BwdParams argument. What the HIP
// launcher (mma_bwd_amd.cu) does with these numbers, the emulator harness (emulator/) does by hand;
// mma_bwd_amd_check.cu asserts at compile time that the kernels' tiles are these for every AMD atom.
#include <array>
#include <cstddef>
#include <string>

#include "src/bwd_params.h"

namespace flashprobe {
struct AttnProblem;
}

namespace flashprobe::kernels {

inline constexpr int kAmdBwdBlock = 64;       // keys per dK/dV block, query rows per dQ block
inline constexpr int kAmdBwdRowdotThreads = 128;  // bwd_rowdot: one thread per row
inline constexpr int kAmdBwdDims[] = {64, 128};   // d == dv
// Query rows per dK/dV step and keys per dQ step: the LDS of both kernels stays under 64 KB.
constexpr int amd_bwd_tile(int d) { return d > 64 ? 32 : 64; }

struct AmdBwdPlan {
  std::string atom, elem;            // the atom struct of the family and dtype; "F16" or "BF16"
  int d = 0, tile = 0, waves = 0, wave_size = 0, threads = 0;
  std::array<unsigned, 3> grid_rowdot{}, grid_dkdv{}, grid_dq{};
  BwdParams params{};                // pointer fields hold placeholders; offsets below
  // q, k, v, o, lse, alibi, seqlens (in params.f), dout, dq, dk, dv, dvec
  std::array<std::size_t, 12> pointer_offsets{};
};

// family: "gfx11", "gfx12" or "cdna"; throws UsageError for a problem the kernel refuses.
AmdBwdPlan amd_bwd_plan(const AttnProblem& p, const std::string& family);

}  // namespace flashprobe::kernels
