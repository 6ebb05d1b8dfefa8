#pragma once
// The block of mma_bwd_fa2 / mma_bwd_det_fa2 (FlashAttention-2's sm80 backward block; host and device
// code, one definition read by the kernel, the registry's shared-memory count and the CPU test
// tests/kernels/test_mma_bwd_fa2_plan.cpp): 8 waves, 128 keys per block, query tiles of 128 rows at
// d = 64 and 64 at d = 128, the waves split in two dimensions per product:
//   S^T, dP^T (keys x queries): 4 x 2 waves, 32 keys x Br / 2 queries each; P^T and dS^T go to shared
//     memory as [key][query] tiles;
//   dK, dV (keys x dims): 4 x 2 waves, 32 keys x D / 2 dims each, A = P^T or dS^T from shared memory;
//   dQ (queries x dims, fast mode): 32 query rows x 32 dims per wave, A = dS read k-major (.trans)
//     from the same [key][query] tile.
// Wave w's tile in each product: (w % rows-of-waves, w / rows-of-waves).
namespace flashprobe::kernels {

template <int D>
struct MmaBwdFa2Plan {
  static_assert(D == 64 || D == 128, "mma_bwd_fa2 is planned for d in {64, 128}");
  static constexpr int kWaves = 8, kBc = 128, kBr = D == 64 ? 128 : 64;
  // S^T and dP^T
  static constexpr int kSWk = 4, kSWq = kWaves / kSWk, kSKeys = kBc / kSWk, kSRows = kBr / kSWq;
  // dK and dV
  static constexpr int kKWk = 4, kKWd = kWaves / kKWk, kKKeys = kBc / kKWk, kKDims = D / kKWd;
  // dQ
  static constexpr int kQWq = kBr / 32, kQWd = kWaves / kQWq, kQRows = kBr / kQWq, kQDims = D / kQWd;
  static constexpr int s_key0(int w) { return (w % kSWk) * kSKeys; }
  static constexpr int s_row0(int w) { return (w / kSWk) * kSRows; }
  static constexpr int kv_key0(int w) { return (w % kKWk) * kKKeys; }
  static constexpr int kv_dim0(int w) { return (w / kKWk) * kKDims; }
  static constexpr int q_row0(int w) { return (w % kQWq) * kQRows; }
  static constexpr int q_dim0(int w) { return (w / kQWq) * kQDims; }

  // Shared memory, in 16-bit elements then floats: K, V (kBc rows of kLd) | two stages of (Q, dO)
  // (kBr rows of kLd) | P^T, dS^T (kBc rows of kPLd) | two stages of LSE * log2e and D (kBr floats).
  // The pads (8 elements, 16 bytes) put the 8 rows of one ldmatrix matrix, and one wave's 32-bit
  // stores of a C slot pair, on distinct banks.
  static constexpr int kLd = D + 8, kPLd = kBr + 8;
  static constexpr int kKTile = kBc * kLd, kQTile = kBr * kLd, kPTile = kBc * kPLd;
  static constexpr int kK = 0, kV = kKTile, kQd = 2 * kKTile;  // stage s: Q at kQd + 2 s kQTile, dO after
  static constexpr int kP = kQd + 4 * kQTile, kDs = kP + kPTile;
  static constexpr int kHalfElems = kDs + kPTile;
  static constexpr int kLseBytes = 2 * kHalfElems;  // byte offset of the floats: lse[2][kBr], dvec[2][kBr]
  static constexpr int kSmemBytes = kLseBytes + 4 * 2 * 2 * kBr;
  static_assert(kSKeys % 16 == 0 && kSRows % 16 == 0 && kKKeys % 16 == 0 && kKDims % 16 == 0 && kQRows % 16 == 0 &&
                    kQDims % 16 == 0 && kBr % 16 == 0,
                "wave tiles are whole m16 tiles and pairs of n8 tiles");
  static_assert(kLseBytes % 16 == 0, "the float arrays are 16-byte aligned");
};

}  // namespace flashprobe::kernels
