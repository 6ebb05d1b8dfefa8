#pragma once
// AMD matrix instructions as kernel-facing atoms (see atom_layout.cuh for the contract).
//
//   GFX11 WMMA (RDNA3, wave32) v_wmma_f32_16x16x16_{f16,bf16}: "RDNA3 ISA Reference Guide", section
//     "Wave Matrix Multiply Accumulate": A/B hold a whole row/column of 16 k values per lane, lanes
//     16-31 must REPLICATE lanes 0-15 (a() and b() return the same element for lane and lane + 16,
//     so a kernel loading through them replicates by construction); C/D: 8 f32 per lane,
//     row 2*i + lane/16, col lane%16.
//   GFX12 WMMA (RDNA4, wave32) v_wmma_f32_16x16x16_{f16,bf16}: "RDNA4 ISA Reference Guide": no
//     replication, A/B 8 values per lane, k = i + 8*(lane/16); C/D row i + 8*(lane/16), col lane%16.
//   CDNA MFMA (wave64) v_mfma_f32_32x32x8{f16,bf16_1k}: "AMD Instinct MI200/MI300 ISA" and AMD's
//     matrix instruction calculator: A/B 4 values per lane, row/col lane%32, k 4*(lane/32) + i;
//     C/D 16 f32 per lane, row 8*(i/4) + 4*(lane/32) + i%4, col lane%32.
// None of these were measured on AMD hardware by this project: they are checked against the
// documents and the probe engine's simulation (tests/probes), and compiled and inspected for every
// target (cmake/AmdDeviceCode.cmake). Off their targets mma() traps.
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/atom_layout.cuh"

namespace flashprobe::atoms {

namespace amd_detail {
#if defined(FP_VENDOR_HIP)
typedef _Float16 h16x16 __attribute__((ext_vector_type(16)));
typedef short s16x16 __attribute__((ext_vector_type(16)));
typedef _Float16 h16x8 __attribute__((ext_vector_type(8)));
typedef short s16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 h16x4 __attribute__((ext_vector_type(4)));
typedef short s16x4 __attribute__((ext_vector_type(4)));
typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
template <class V, class T, int R>
FP_DEV V as_vec(const T (&r)[R]) {
  static_assert(sizeof(V) == sizeof(r));
  V v;
  __builtin_memcpy(&v, r, sizeof(v));
  return v;
}
template <class V, int R>
FP_DEV void from_vec(float (&d)[R], const V& v) {
  static_assert(sizeof(V) == sizeof(d));
  __builtin_memcpy(d, &v, sizeof(d));
}
#endif
}  // namespace amd_detail

#if defined(__GFX11__) || defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
#define FP_AMD_GFX11 1
#endif
#if defined(__GFX12__) || defined(__gfx1200__) || defined(__gfx1201__)
#define FP_AMD_GFX12 1
#endif
#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define FP_AMD_CDNA 1
#endif


struct GFX11_WMMA_16x16x16_F32F16_W32 : GFX11_WMMA_16x16x16_Layout {
  static constexpr const char* kName = "GFX11_WMMA_16x16x16_F32F16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_AMD_GFX11) && defined(__HIP_DEVICE_COMPILE__)
    using namespace amd_detail;
    amd_detail::from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(as_vec<h16x16>(a), as_vec<h16x16>(b),
                                                                       as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX11_WMMA_16x16x16_F32BF16_W32 : GFX11_WMMA_16x16x16_Layout {
  static constexpr const char* kName = "GFX11_WMMA_16x16x16_F32BF16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_AMD_GFX11) && defined(__HIP_DEVICE_COMPILE__)
    using namespace amd_detail;
    amd_detail::from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(as_vec<s16x16>(a), as_vec<s16x16>(b),
                                                                        as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};


struct GFX12_WMMA_16x16x16_F32F16_W32 : GFX12_WMMA_16x16x16_Layout {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32F16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[4], const std::uint32_t (&b)[4]) {
#if defined(FP_AMD_GFX12) && defined(__HIP_DEVICE_COMPILE__)
    using namespace amd_detail;
    amd_detail::from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(
                                as_vec<h16x8>(a), as_vec<h16x8>(b), as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX12_WMMA_16x16x16_F32BF16_W32 : GFX12_WMMA_16x16x16_Layout {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32BF16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[4], const std::uint32_t (&b)[4]) {
#if defined(FP_AMD_GFX12) && defined(__HIP_DEVICE_COMPILE__)
    using namespace amd_detail;
    amd_detail::from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(
                                as_vec<s16x8>(a), as_vec<s16x8>(b), as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};


struct CDNA_MFMA_32x32x8_F32F16 : CDNA_MFMA_32x32x8_Layout {
  static constexpr const char* kName = "CDNA_MFMA_32x32x8_F32F16";
  FP_DEV static void mma(float (&d)[16], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_AMD_CDNA) && defined(__HIP_DEVICE_COMPILE__)
    using namespace amd_detail;
    amd_detail::from_vec(d, __builtin_amdgcn_mfma_f32_32x32x8f16(
                                as_vec<h16x4>(a), as_vec<h16x4>(b), as_vec<f32x16>(d), 0, 0, 0));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct CDNA_MFMA_32x32x8_F32BF16_1K : CDNA_MFMA_32x32x8_Layout {
  static constexpr const char* kName = "CDNA_MFMA_32x32x8_F32BF16_1K";
  FP_DEV static void mma(float (&d)[16], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_AMD_CDNA) && defined(__HIP_DEVICE_COMPILE__)
    using namespace amd_detail;
    amd_detail::from_vec(d, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(
                                as_vec<s16x4>(a), as_vec<s16x4>(b), as_vec<f32x16>(d), 0, 0, 0));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

}  // namespace flashprobe::atoms
