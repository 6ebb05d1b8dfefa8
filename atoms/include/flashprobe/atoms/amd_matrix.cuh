#pragma once
// AMD matrix instructions as atoms (the contract: layouts.h): every WMMA and MFMA form this project
// uses or probes, one struct each, with the layout (amd_layout.h), the instruction behind mma() and
// the register packing of its operands. The mma kernel calls the wave32 f32 WMMA and the 32x32x8
// MFMA atoms; the probe executors (probes/amd/*.cu) run every atom's mma(), so a probe of an AMD GPU
// checks the very wrapper (packing included) the kernel calls.
//
//   mma(d, a, b)   d += a * b. A and B: 16-bit elements two per 32-bit register (slot s in register
//                  s / 2, low half first), fp8 four per register (byte s % 4). D: f32 accumulators one
//                  per float; 16-bit accumulators (gfx11 OPSEL forms) two per register, the half
//                  that OPSEL does not select passing C through.
//
//   GFX11 WMMA (RDNA3/3.5) v_wmma_*_16x16x16_*: "RDNA3 ISA Reference Guide", section "Wave Matrix
//     Multiply Accumulate": A/B hold a whole row/column of 16 k values per lane, lanes 16-31 (wave64:
//     16-63) must REPLICATE lanes 0-15 (a() and b() return the same element for them, so a kernel
//     loading through them replicates by construction).
//   GFX12 WMMA (RDNA4) v_wmma_f32_16x16x16_{f16,bf16,fp8_fp8,fp8_bf8,bf8_fp8,bf8_bf8}: "RDNA4 ISA
//     Reference Guide": no replication; the 8-bit forms order k per lane differently from the 16-bit
//     ones (amd_layout.h).
//   CDNA MFMA (wave64) v_mfma_f32_{32x32x8,16x16x16}{f16,bf16_1k},
//     v_mfma_f32_{16x16x32,32x32x16}_{fp8,bf8}_{fp8,bf8} (amd_matrix_8bit.cuh):
//     "AMD Instinct MI200/MI300 ISA" and AMD's matrix instruction calculator; cbsz, abid and blgp 0.
// None of these were measured on AMD hardware by this project: they are checked against the
// documents and the probe engine's simulation (tests/probes), and compiled and inspected for every
// target (cmake/AmdDeviceCode.cmake). Off their targets (targets.h, amd_targets.cuh) and in a code
// object of the other wave size, mma() traps.
#include "flashprobe/atoms/amd_layout.h"
#include "flashprobe/atoms/amd_targets.cuh"
#include "flashprobe/atoms/atom_layout.cuh"

#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_GFX11_WMMA) && FP_AMD_WAVE == 32
#define FP_ATOM_GFX11_W32 1
#endif
#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_GFX11_WMMA) && FP_AMD_WAVE == 64
#define FP_ATOM_GFX11_W64 1
#endif
#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_GFX12_WMMA) && FP_AMD_WAVE == 32
#define FP_ATOM_GFX12_W32 1
#endif
#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_GFX12_WMMA) && FP_AMD_WAVE == 64
#define FP_ATOM_GFX12_W64 1
#endif
#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_MFMA_F16)
#define FP_ATOM_MFMA_F16 1
#endif
#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_MFMA_BF16_1K)
#define FP_ATOM_MFMA_BF16_1K 1
#endif
#if defined(__HIP_DEVICE_COMPILE__) && defined(FP_AMD_MFMA_FP8_FNUZ)
#define FP_ATOM_MFMA_FP8_FNUZ 1
#endif

namespace flashprobe::atoms {

namespace amd_detail {
#if defined(FP_VENDOR_HIP)
typedef _Float16 h16x16 __attribute__((ext_vector_type(16)));
typedef short s16x16 __attribute__((ext_vector_type(16)));
typedef _Float16 h16x8 __attribute__((ext_vector_type(8)));
typedef short s16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 h16x4 __attribute__((ext_vector_type(4)));
typedef short s16x4 __attribute__((ext_vector_type(4)));
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef int i32x2 __attribute__((ext_vector_type(2)));
typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
template <class V, class T, int R>
FP_DEV V as_vec(const T (&r)[R]) {
  static_assert(sizeof(V) == sizeof(r));
  V v;
  __builtin_memcpy(&v, r, sizeof(v));
  return v;
}
template <class V, class T, int R>
FP_DEV void from_vec(T (&d)[R], const V& v) {
  static_assert(sizeof(V) == sizeof(d));
  __builtin_memcpy(d, &v, sizeof(d));
}
// Eight fp8 values in the 64-bit operand of the gfx94x fp8 MFMA builtins.
FP_DEV long as_long(const std::uint32_t (&r)[2]) {
  return static_cast<long>(static_cast<unsigned long long>(r[0]) | (static_cast<unsigned long long>(r[1]) << 32));
}
#endif
}  // namespace amd_detail

// Element types and register counts an atom's mma() takes (kARegs x 32 bits of A, ...). A and B
// differ only in the mixed fp8/bf8 forms (kInB defaults to A's type).
template <class Layout, AtomElem kInA_, AtomElem kAcc_, AtomElem kInB_ = kInA_>
struct AmdAtom : Layout {
  static constexpr AtomElem kInA = kInA_, kInB = kInB_, kAcc = kAcc_;
  static constexpr int kARegs = Layout::kA * elem_bits(kInA_) / 32, kBRegs = Layout::kB * elem_bits(kInB_) / 32;
  static constexpr int kDRegs = Layout::kC * elem_bits(kAcc_) / 32;
};

// --- gfx11 WMMA, wave32 ---

struct GFX11_WMMA_16x16x16_F32F16_W32 : AmdAtom<GFX11_WMMA_Layout<32>, AtomElem::f16, AtomElem::f32> {
  static constexpr const char* kName = "GFX11_WMMA_16x16x16_F32F16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W32)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(as_vec<h16x16>(a), as_vec<h16x16>(b), as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX11_WMMA_16x16x16_F32BF16_W32 : AmdAtom<GFX11_WMMA_Layout<32>, AtomElem::bf16, AtomElem::f32> {
  static constexpr const char* kName = "GFX11_WMMA_16x16x16_F32BF16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W32)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(as_vec<s16x16>(a), as_vec<s16x16>(b), as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

// kHi: OPSEL high, the results in the odd slots (upper halves of the eight registers).

template <bool kHi>
struct GFX11_WMMA_16x16x16_F16F16_W32_OPSEL : AmdAtom<GFX11_WMMA_Layout<32, kHi>, AtomElem::f16, AtomElem::f16> {
  static constexpr const char* kName = kHi ? "GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI" : "GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_LO";
  FP_DEV static void mma(std::uint32_t (&d)[8], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W32)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f16_16x16x16_f16_w32(as_vec<h16x16>(a), as_vec<h16x16>(b), as_vec<h16x16>(d), kHi));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

template <bool kHi>
struct GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL : AmdAtom<GFX11_WMMA_Layout<32, kHi>, AtomElem::bf16, AtomElem::bf16> {
  static constexpr const char* kName = kHi ? "GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_HI" : "GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_LO";
  FP_DEV static void mma(std::uint32_t (&d)[8], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W32)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32(as_vec<s16x16>(a), as_vec<s16x16>(b), as_vec<s16x16>(d), kHi));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

// --- gfx11 WMMA, wave64 (a code object built with -mwavefrontsize64) ---

struct GFX11_WMMA_16x16x16_F32F16_W64 : AmdAtom<GFX11_WMMA_Layout<64>, AtomElem::f16, AtomElem::f32> {
  static constexpr const char* kName = "GFX11_WMMA_16x16x16_F32F16_W64";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W64)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(as_vec<h16x16>(a), as_vec<h16x16>(b), as_vec<f32x4>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX11_WMMA_16x16x16_F32BF16_W64 : AmdAtom<GFX11_WMMA_Layout<64>, AtomElem::bf16, AtomElem::f32> {
  static constexpr const char* kName = "GFX11_WMMA_16x16x16_F32BF16_W64";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W64)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf16_w64(as_vec<s16x16>(a), as_vec<s16x16>(b), as_vec<f32x4>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

template <bool kHi>
struct GFX11_WMMA_16x16x16_F16F16_W64_OPSEL : AmdAtom<GFX11_WMMA_Layout<64, kHi>, AtomElem::f16, AtomElem::f16> {
  static constexpr const char* kName = kHi ? "GFX11_WMMA_16x16x16_F16F16_W64_OPSEL_HI" : "GFX11_WMMA_16x16x16_F16F16_W64_OPSEL_LO";
  FP_DEV static void mma(std::uint32_t (&d)[4], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W64)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f16_16x16x16_f16_w64(as_vec<h16x16>(a), as_vec<h16x16>(b), as_vec<h16x8>(d), kHi));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

template <bool kHi>
struct GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL : AmdAtom<GFX11_WMMA_Layout<64, kHi>, AtomElem::bf16, AtomElem::bf16> {
  static constexpr const char* kName = kHi ? "GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL_HI" : "GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL_LO";
  FP_DEV static void mma(std::uint32_t (&d)[4], const std::uint32_t (&a)[8], const std::uint32_t (&b)[8]) {
#if defined(FP_ATOM_GFX11_W64)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w64(as_vec<s16x16>(a), as_vec<s16x16>(b), as_vec<s16x8>(d), kHi));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

// --- gfx12 WMMA ---

struct GFX12_WMMA_16x16x16_F32F16_W32 : AmdAtom<GFX12_WMMA_Layout<32>, AtomElem::f16, AtomElem::f32> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32F16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[4], const std::uint32_t (&b)[4]) {
#if defined(FP_ATOM_GFX12_W32)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(as_vec<h16x8>(a), as_vec<h16x8>(b), as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX12_WMMA_16x16x16_F32BF16_W32 : AmdAtom<GFX12_WMMA_Layout<32>, AtomElem::bf16, AtomElem::f32> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32BF16_W32";
  FP_DEV static void mma(float (&d)[8], const std::uint32_t (&a)[4], const std::uint32_t (&b)[4]) {
#if defined(FP_ATOM_GFX12_W32)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(as_vec<s16x8>(a), as_vec<s16x8>(b), as_vec<f32x8>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX12_WMMA_16x16x16_F32F16_W64 : AmdAtom<GFX12_WMMA_Layout<64>, AtomElem::f16, AtomElem::f32> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32F16_W64";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_GFX12_W64)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12(as_vec<h16x4>(a), as_vec<h16x4>(b), as_vec<f32x4>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct GFX12_WMMA_16x16x16_F32BF16_W64 : AmdAtom<GFX12_WMMA_Layout<64>, AtomElem::bf16, AtomElem::f32> {
  static constexpr const char* kName = "GFX12_WMMA_16x16x16_F32BF16_W64";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_GFX12_W64)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_wmma_f32_16x16x16_bf16_w64_gfx12(as_vec<s16x4>(a), as_vec<s16x4>(b), as_vec<f32x4>(d)));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

// --- CDNA MFMA (wave64) ---

struct CDNA_MFMA_32x32x8_F32F16 : AmdAtom<CDNA_MFMA_Layout<32, 8>, AtomElem::f16, AtomElem::f32> {
  static constexpr const char* kName = "CDNA_MFMA_32x32x8_F32F16";
  FP_DEV static void mma(float (&d)[16], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_MFMA_F16)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_mfma_f32_32x32x8f16(as_vec<h16x4>(a), as_vec<h16x4>(b), as_vec<f32x16>(d), 0, 0, 0));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct CDNA_MFMA_32x32x8_F32BF16_1K : AmdAtom<CDNA_MFMA_Layout<32, 8>, AtomElem::bf16, AtomElem::f32> {
  static constexpr const char* kName = "CDNA_MFMA_32x32x8_F32BF16_1K";
  FP_DEV static void mma(float (&d)[16], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_MFMA_BF16_1K)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(as_vec<s16x4>(a), as_vec<s16x4>(b), as_vec<f32x16>(d), 0, 0, 0));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct CDNA_MFMA_16x16x16_F32F16 : AmdAtom<CDNA_MFMA_Layout<16, 16>, AtomElem::f16, AtomElem::f32> {
  static constexpr const char* kName = "CDNA_MFMA_16x16x16_F32F16";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_MFMA_F16)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_mfma_f32_16x16x16f16(as_vec<h16x4>(a), as_vec<h16x4>(b), as_vec<f32x4>(d), 0, 0, 0));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

struct CDNA_MFMA_16x16x16_F32BF16_1K : AmdAtom<CDNA_MFMA_Layout<16, 16>, AtomElem::bf16, AtomElem::f32> {
  static constexpr const char* kName = "CDNA_MFMA_16x16x16_F32BF16_1K";
  FP_DEV static void mma(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
#if defined(FP_ATOM_MFMA_BF16_1K)
    using namespace amd_detail;
    from_vec(d, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(as_vec<s16x4>(a), as_vec<s16x4>(b), as_vec<f32x4>(d), 0, 0, 0));
#else
    (void)d, (void)a, (void)b;
    fp_dev::trap();
#endif
  }
};

}  // namespace flashprobe::atoms

// The 8-bit forms (gfx12 OCP and gfx94x FNUZ fp8/bf8, mixed A/B types included).
#include "flashprobe/atoms/amd_matrix_8bit.cuh"
