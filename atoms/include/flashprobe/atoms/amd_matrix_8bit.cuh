#pragma once
// AMD matrix instructions with 8-bit A and B (part of amd_matrix.cuh, which includes this file):
// fp8 (e4m3) and bf8 (e5m2) in every pairing the hardware has, f32 accumulators.
//
//   GFX12 WMMA (RDNA4) v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}: OCP formats; four per register (slot
//     s in byte s % 4 of register s / 4), eight per lane in wave32, four in wave64; one layout for
//     all four pairings (GFX12_WMMA_8bit_Layout), as the RDNA4 ISA guide and AMD's calculator state.
//   CDNA3 MFMA v_mfma_f32_{16x16x32,32x32x16}_{fp8,bf8}_{fp8,bf8} (gfx940/941/942): FNUZ formats;
//     eight per lane in one 64-bit operand; cbsz, abid and blgp 0.
// The mnemonic names A's type first: v_wmma_f32_16x16x16_fp8_bf8 takes fp8 A and bf8 B. Atom names
// follow it: F32E4M3E5M2 = A e4m3, B e5m2; F32E5M2 = both e5m2.
#include "flashprobe/atoms/amd_matrix.cuh"

namespace flashprobe::atoms {

namespace amd_detail {
template <AtomElem kA, AtomElem kB, AtomElem kFp8, AtomElem kBf8>
constexpr int pairing() {  // 0: fp8 fp8, 1: fp8 bf8, 2: bf8 fp8, 3: bf8 bf8
  static_assert((kA == kFp8 || kA == kBf8) && (kB == kFp8 || kB == kBf8), "not an 8-bit pairing of this family");
  return (kA == kBf8 ? 2 : 0) + (kB == kBf8 ? 1 : 0);
}
}  // namespace amd_detail

// --- gfx12 WMMA, OCP e4m3 / e5m2 ---

template <AtomElem kA_, AtomElem kB_>
struct Gfx12Wmma8bitW32 : AmdAtom<GFX12_WMMA_8bit_Layout<32>, kA_, AtomElem::f32, kB_> {
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_GFX12_W32)
    using namespace amd_detail;
    constexpr int p = pairing<kA_, kB_, AtomElem::e4m3, AtomElem::e5m2>();
    const i32x2 va = as_vec<i32x2>(a), vb = as_vec<i32x2>(b);
    const f32x8 vc = as_vec<f32x8>(d);
    if constexpr (p == 0) from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(va, vb, vc));
    else if constexpr (p == 1) from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w32_gfx12(va, vb, vc));
    else if constexpr (p == 2) from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w32_gfx12(va, vb, vc));
    else from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w32_gfx12(va, vb, vc));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

template <AtomElem kA_, AtomElem kB_>
struct Gfx12Wmma8bitW64 : AmdAtom<GFX12_WMMA_8bit_Layout<64>, kA_, AtomElem::f32, kB_> {
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[1], const std::uint32_t (&b)[1]) {
#if defined(FP_ATOM_GFX12_W64)
    using namespace amd_detail;
    constexpr int p = pairing<kA_, kB_, AtomElem::e4m3, AtomElem::e5m2>();
    const int va = static_cast<int>(a[0]), vb = static_cast<int>(b[0]);
    const f32x4 vc = as_vec<f32x4>(d);
    if constexpr (p == 0) from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w64_gfx12(va, vb, vc));
    else if constexpr (p == 1) from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w64_gfx12(va, vb, vc));
    else if constexpr (p == 2) from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w64_gfx12(va, vb, vc));
    else from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w64_gfx12(va, vb, vc));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX12_WMMA_16x16x16_F32E4M3_W32 : Gfx12Wmma8bitW32<AtomElem::e4m3, AtomElem::e4m3> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E4M3_W32";
};
struct GFX12_WMMA_16x16x16_F32E4M3E5M2_W32 : Gfx12Wmma8bitW32<AtomElem::e4m3, AtomElem::e5m2> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E4M3E5M2_W32";
};
struct GFX12_WMMA_16x16x16_F32E5M2E4M3_W32 : Gfx12Wmma8bitW32<AtomElem::e5m2, AtomElem::e4m3> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E5M2E4M3_W32";
};
struct GFX12_WMMA_16x16x16_F32E5M2_W32 : Gfx12Wmma8bitW32<AtomElem::e5m2, AtomElem::e5m2> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E5M2_W32";
};
struct GFX12_WMMA_16x16x16_F32E4M3_W64 : Gfx12Wmma8bitW64<AtomElem::e4m3, AtomElem::e4m3> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E4M3_W64";
};
struct GFX12_WMMA_16x16x16_F32E4M3E5M2_W64 : Gfx12Wmma8bitW64<AtomElem::e4m3, AtomElem::e5m2> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E4M3E5M2_W64";
};
struct GFX12_WMMA_16x16x16_F32E5M2E4M3_W64 : Gfx12Wmma8bitW64<AtomElem::e5m2, AtomElem::e4m3> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E5M2E4M3_W64";
};
struct GFX12_WMMA_16x16x16_F32E5M2_W64 : Gfx12Wmma8bitW64<AtomElem::e5m2, AtomElem::e5m2> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32E5M2_W64";
};

// --- CDNA3 MFMA, FNUZ e4m3 / e5m2 ---

template <int kDim, AtomElem kA_, AtomElem kB_>
struct Cdna3Mfma8bit : AmdAtom<CDNA_MFMA_Layout<kDim, 512 / kDim>, kA_, AtomElem::f32, kB_> {
  static_assert(kDim == 16 || kDim == 32, "CDNA3 8-bit MFMA: 16x16x32 or 32x32x16");
  FP_DEV static void mma(float (&d)[kDim == 16 ? 4 : 16], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_MFMA_FP8_FNUZ)
    using namespace amd_detail;
    constexpr int p = pairing<kA_, kB_, AtomElem::e4m3fnuz, AtomElem::e5m2fnuz>();
    const long va = as_long(a), vb = as_long(b);
    if constexpr (kDim == 16) {
      const f32x4 vc = as_vec<f32x4>(d);
      if constexpr (p == 0) from_vec(d, __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(va, vb, vc, 0, 0, 0));
      else if constexpr (p == 1) from_vec(d, __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(va, vb, vc, 0, 0, 0));
      else if constexpr (p == 2) from_vec(d, __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(va, vb, vc, 0, 0, 0));
      else from_vec(d, __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(va, vb, vc, 0, 0, 0));
    } else {
      const f32x16 vc = as_vec<f32x16>(d);
      if constexpr (p == 0) from_vec(d, __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(va, vb, vc, 0, 0, 0));
      else if constexpr (p == 1) from_vec(d, __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8(va, vb, vc, 0, 0, 0));
      else if constexpr (p == 2) from_vec(d, __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8(va, vb, vc, 0, 0, 0));
      else from_vec(d, __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(va, vb, vc, 0, 0, 0));
    }
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct CDNA_MFMA_16x16x32_F32E4M3 : Cdna3Mfma8bit<16, AtomElem::e4m3fnuz, AtomElem::e4m3fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_16x16x32_F32E4M3";
};
struct CDNA_MFMA_16x16x32_F32E4M3E5M2 : Cdna3Mfma8bit<16, AtomElem::e4m3fnuz, AtomElem::e5m2fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_16x16x32_F32E4M3E5M2";
};
struct CDNA_MFMA_16x16x32_F32E5M2E4M3 : Cdna3Mfma8bit<16, AtomElem::e5m2fnuz, AtomElem::e4m3fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_16x16x32_F32E5M2E4M3";
};
struct CDNA_MFMA_16x16x32_F32E5M2 : Cdna3Mfma8bit<16, AtomElem::e5m2fnuz, AtomElem::e5m2fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_16x16x32_F32E5M2";
};
struct CDNA_MFMA_32x32x16_F32E4M3 : Cdna3Mfma8bit<32, AtomElem::e4m3fnuz, AtomElem::e4m3fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_32x32x16_F32E4M3";
};
struct CDNA_MFMA_32x32x16_F32E4M3E5M2 : Cdna3Mfma8bit<32, AtomElem::e4m3fnuz, AtomElem::e5m2fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_32x32x16_F32E4M3E5M2";
};
struct CDNA_MFMA_32x32x16_F32E5M2E4M3 : Cdna3Mfma8bit<32, AtomElem::e5m2fnuz, AtomElem::e4m3fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_32x32x16_F32E5M2E4M3";
};
struct CDNA_MFMA_32x32x16_F32E5M2 : Cdna3Mfma8bit<32, AtomElem::e5m2fnuz, AtomElem::e5m2fnuz> {
  static constexpr const char* kName = "CDNA_MFMA_32x32x16_F32E5M2";
};

}  // namespace flashprobe::atoms
