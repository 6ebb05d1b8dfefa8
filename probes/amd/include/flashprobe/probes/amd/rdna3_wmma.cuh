#pragma once
// RDNA3 (gfx11) WMMA atoms: D = A*B + C on a 16x16x16 tile per wave, behind
// __builtin_amdgcn_wmma_*_16x16x16_*_w32/_w64. A and B are v16 (16 elements per lane) in both wave
// sizes: in wave32 lanes 16-31 must hold copies of lanes 0-15 (in wave64 lanes 16-63 copy 0-15),
// which the probe reports as replicas. C/D is v8f32 (wave32) / v4f32 (wave64) for the f32 forms;
// the 16-bit accumulator forms use v16/v8 16-bit vectors of which OPSEL picks the even (low) or odd
// (high) slots, the other slots passing C through. Sources: "RDNA3 Instruction Set Architecture"
// (AMD, 2023), chapter "Wave Matrix Multiply Accumulate"; GPUOpen "How to accelerate AI
// applications on RDNA 3 using WMMA" (gpuopen.com/learn/wmma_on_rdna3).
//
//   using Atom = fp_amd::Gfx11WmmaF32F16W32;
//   Atom::C::Frag d = Atom::mma(a, b, c);     // a, b: v16f16, c: v8f32; wave32 code object
#include <string_view>

#include "flashprobe/probes/amd/operands.cuh"

namespace fp_amd {

#if defined(FP_AMD_GFX11_WMMA) && FP_AMD_WAVE == 32
#define FP_AMD_GFX11_W32 1
#endif
#if defined(FP_AMD_GFX11_WMMA) && FP_AMD_WAVE == 64
#define FP_AMD_GFX11_W64 1
#endif

struct Gfx11WmmaF32F16W32 {
  static constexpr std::string_view kName = "GFX11_WMMA_16x16x16_F32F16_W32";
  static constexpr int kWave = 32;
  using A = VecOperand<F16Codec, 16>;
  using B = A;
  using C = VecOperand<F32Codec, 8>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W32)
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
#else
    wrong_target();
#endif
  }
};

struct Gfx11WmmaF32BF16W32 {
  static constexpr std::string_view kName = "GFX11_WMMA_16x16x16_F32BF16_W32";
  static constexpr int kWave = 32;
  using A = VecOperand<BF16Codec, 16>;
  using B = A;
  using C = VecOperand<F32Codec, 8>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W32)
    return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c);
#else
    wrong_target();
#endif
  }
};

// kHi: OPSEL high, results in the odd slots (upper halves of the eight VGPRs).
template <bool kHi>
struct Gfx11WmmaF16F16W32 {
  static constexpr std::string_view kName =
      kHi ? "GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_HI" : "GFX11_WMMA_16x16x16_F16F16_W32_OPSEL_LO";
  static constexpr int kWave = 32;
  using A = VecOperand<F16Codec, 16>;
  using B = A;
  using C = VecOperand<F16Codec, 16>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W32)
    return __builtin_amdgcn_wmma_f16_16x16x16_f16_w32(a, b, c, kHi);
#else
    wrong_target();
#endif
  }
};

template <bool kHi>
struct Gfx11WmmaBF16BF16W32 {
  static constexpr std::string_view kName =
      kHi ? "GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_HI" : "GFX11_WMMA_16x16x16_BF16BF16_W32_OPSEL_LO";
  static constexpr int kWave = 32;
  using A = VecOperand<BF16Codec, 16>;
  using B = A;
  using C = VecOperand<BF16Codec, 16>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W32)
    return __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32(a, b, c, kHi);
#else
    wrong_target();
#endif
  }
};

struct Gfx11WmmaF32F16W64 {
  static constexpr std::string_view kName = "GFX11_WMMA_16x16x16_F32F16_W64";
  static constexpr int kWave = 64;
  using A = VecOperand<F16Codec, 16>;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W64)
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(a, b, c);
#else
    wrong_target();
#endif
  }
};

struct Gfx11WmmaF32BF16W64 {
  static constexpr std::string_view kName = "GFX11_WMMA_16x16x16_F32BF16_W64";
  static constexpr int kWave = 64;
  using A = VecOperand<BF16Codec, 16>;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W64)
    return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w64(a, b, c);
#else
    wrong_target();
#endif
  }
};

template <bool kHi>
struct Gfx11WmmaF16F16W64 {
  static constexpr std::string_view kName =
      kHi ? "GFX11_WMMA_16x16x16_F16F16_W64_OPSEL_HI" : "GFX11_WMMA_16x16x16_F16F16_W64_OPSEL_LO";
  static constexpr int kWave = 64;
  using A = VecOperand<F16Codec, 16>;
  using B = A;
  using C = VecOperand<F16Codec, 8>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W64)
    return __builtin_amdgcn_wmma_f16_16x16x16_f16_w64(a, b, c, kHi);
#else
    wrong_target();
#endif
  }
};

template <bool kHi>
struct Gfx11WmmaBF16BF16W64 {
  static constexpr std::string_view kName =
      kHi ? "GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL_HI" : "GFX11_WMMA_16x16x16_BF16BF16_W64_OPSEL_LO";
  static constexpr int kWave = 64;
  using A = VecOperand<BF16Codec, 16>;
  using B = A;
  using C = VecOperand<BF16Codec, 8>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX11_W64)
    return __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w64(a, b, c, kHi);
#else
    wrong_target();
#endif
  }
};

}  // namespace fp_amd
