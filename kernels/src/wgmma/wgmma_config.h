#pragma once
// The wgmma kernel's tile configuration and shared-memory addressing, as plain constexpr code that
// the kernel (wgmma_attn.cuh) and a CPU test (tests/kernels/test_wgmma_smem.cpp) share: the test
// replays the TMA's box placement and the wgmma descriptors' canonical layouts (PTX ISA "Shared
// Memory Matrix Layout", 128-byte swizzle) through these functions for every element, so a change
// of tile sizes, stage count or descriptor offsets is checked before it reaches a GPU.
//
// Layout in shared memory (1024-byte aligned base), per 64-dim chunk c of a tile, rows of 128 bytes
// as the TMA writes them (SWIZZLE_128B permutes the 16-byte pieces of a row by row % 8; wgmma undoes
// the same permutation, which is a function of the address, so both sides agree on the
// pre-swizzle offsets below):
//   Q          [c][kBm rows][64]
//   K, V       [stage][c][kBn rows][64]
// Descriptors: Q and K are K-major (A and B of S = Q K^T): element (row m, dim k) of a k-step at
//   start + (m / 8) * kSbo + (m % 8) * 128 + 2 k;
// V is N-major (B of O += P V with B[k = key][n = dim]): element (key k, dim n) at
//   start + (n / 64) * kVLbo + (n % 64) * 2 + (k / 8) * kSbo + (k % 8) * 128.
#include <cstdint>

namespace flashprobe::kernels::dev {

template <int D>
struct WgmmaConfig {
  static constexpr int kBm = 128;         // query rows per block
  static constexpr int kBn = 128;         // keys per K/V tile
  static constexpr int kStages = 3;       // K/V tiles in flight (D = 128: 32 + 3 x 64 KB of 227)
  static constexpr int kConsumers = 2;    // warpgroups of 64 rows
  static constexpr int kThreads = kConsumers * 128;
  static constexpr int kChunk = 64;       // 16-bit elements per 128-byte swizzled row
  static constexpr int kChunks = D / kChunk;
  static constexpr int kQBytes = kBm * D * 2;
  static constexpr int kTileBytes = kBn * D * 2;
  static constexpr int kKOff = kQBytes;
  static constexpr int kVOff = kKOff + kStages * kTileBytes;
  static constexpr int kBarOff = kVOff + kStages * kTileBytes;
  static constexpr int kBars = 1 + 3 * kStages;  // q_full, k_full[], v_full[], empty[]
  static constexpr int kSmemBytes = kBarOff + 8 * kBars + 1024;  // + slack to align the base to 1024
  static_assert(D % kChunk == 0, "the TMA boxes are 64 dims (128 bytes) wide");
  static_assert(kBm == kConsumers * 64, "a consumer warpgroup owns the 64 rows of one wgmma tile");
  static_assert(kSmemBytes <= 232448, "more dynamic shared memory than an sm_90 block may have (227 KB)");

  // Descriptor strides: SBO = 8 rows (K-major) or 8 keys (N-major) of 128 bytes; V's LBO = the next
  // 64-dim chunk; K-major LBO is unused with the 128-byte swizzle (one 16-byte unit).
  static constexpr std::uint32_t kSbo = 1024;
  static constexpr std::uint32_t kVLbo = kBn * 128;
  static constexpr std::uint32_t kKLbo = 16;

  // Byte offsets of the descriptor start addresses: warpgroup wg's 64 rows of Q, then k-step kk
  // (16 dims) of S inside them; stage st and k-step kk from the K region; stage st and k-step ks
  // (16 keys) of P·V from the V region.
  static constexpr int q_rows(int wg) { return wg * 64 * 128; }
  static constexpr int q_start(int kk) { return (kk / 4) * kBm * 128 + (kk % 4) * 32; }
  static constexpr int k_start(int st, int kk) { return st * kTileBytes + (kk / 4) * kBn * 128 + (kk % 4) * 32; }
  static constexpr int v_start(int st, int ks) { return st * kTileBytes + ks * 16 * 128; }

  // Where the TMA puts element (row, dim) of a box-filled tile of `rows` rows (pre-swizzle offset).
  static constexpr int tma_offset(int rows, int row, int dim) { return (dim / kChunk) * rows * 128 + row * 128 + (dim % kChunk) * 2; }
};

// The two 32-bit words of a wgmma matrix descriptor with the 128-byte swizzle: start address, LBO
// and SBO in 16-byte units in bits 0-13, 16-29 and 32-45, base offset 0, layout type 1 in bits 62-63.
struct DescWords {
  std::uint32_t lo, hi;
};
constexpr DescWords desc_words_sw128(std::uint32_t smem_addr, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes) {
  return {((smem_addr >> 4) & 0x3FFF) | (((lbo_bytes >> 4) & 0x3FFF) << 16), ((sbo_bytes >> 4) & 0x3FFF) | (1u << 30)};
}

}  // namespace flashprobe::kernels::dev
