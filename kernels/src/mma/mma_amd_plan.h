#pragma once
// The AMD mma launch as plain host data: which instantiation runs for a problem, its grid, block and
// argument bytes. What a real HIP launch (mma_amd.cu, mma_launch.cuh) does with these numbers, the
// emulator harness (emulator/) does by hand; mma_amd_check.cu asserts at compile time that the
// launcher's tile (mma_bn, the block's rows and threads) is this one for every AMD atom.
#include <array>
#include <cstddef>
#include <string>

#include "flashprobe/kernels/params.h"

namespace flashprobe {
struct AttnProblem;
}

namespace flashprobe::kernels {

inline constexpr int kAmdMmaWaves = 4;             // waves per block
constexpr int amd_mma_bn(int d) { return d > 128 ? 32 : 64; }  // keys per K/V tile

struct AmdMmaPlan {
  std::string atom;                  // the atom struct of the family and dtype
  std::string elem;                  // "F16" or "BF16": the kernel's element type
  int d = 0, bn = 0, waves = kAmdMmaWaves, wave_size = 0;
  std::array<unsigned, 3> grid{};
  int threads = 0;
  int order = 0;                     // dev::MmaOrder
  float rescale_log2 = 0;
  Params params{};                   // pointer fields hold placeholders; offsets below
  std::array<std::size_t, 7> pointer_offsets{};  // q, k, v, o, lse, alibi, seqlens in Params
};

// family: "gfx11", "gfx12" or "cdna"; throws UsageError for a problem the AMD kernel refuses.
AmdMmaPlan amd_mma_plan(const AttnProblem& p, const std::string& family);

}  // namespace flashprobe::kernels
