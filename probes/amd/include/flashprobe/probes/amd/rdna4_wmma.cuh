#pragma once
// RDNA4 (gfx12) WMMA atoms: the same 16x16x16 instructions as gfx11 under new encodings, with no
// replicated lanes: A and B are v8 per lane in wave32 (v4 in wave64), each lane holding half of a
// row's K range, and C/D is v8f32 / v4f32. clang-19 exposes them as the *_gfx12 builtins; the
// assembly mnemonic is unchanged (v_wmma_f32_16x16x16_f16). Source: "AMD RDNA 4 Instruction Set
// Architecture" (AMD, 2025), chapter "Wave Matrix Multiply Accumulate" (its matrix layout figures).
//
//   using Atom = fp_amd::Gfx12WmmaF32F16W32;
//   Atom::C::Frag d = Atom::mma(a, b, c);     // a, b: v8f16, c: v8f32; wave32 code object
#include <string_view>

#include "flashprobe/probes/amd/operands.cuh"

namespace fp_amd {

#if defined(FP_AMD_GFX12_WMMA) && FP_AMD_WAVE == 32
#define FP_AMD_GFX12_W32 1
#endif
#if defined(FP_AMD_GFX12_WMMA) && FP_AMD_WAVE == 64
#define FP_AMD_GFX12_W64 1
#endif

struct Gfx12WmmaF32F16W32 {
  static constexpr std::string_view kName = "GFX12_WMMA_16x16x16_F32F16_W32";
  static constexpr int kWave = 32;
  using A = VecOperand<F16Codec, 8>;
  using B = A;
  using C = VecOperand<F32Codec, 8>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX12_W32)
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c);
#else
    wrong_target();
#endif
  }
};

struct Gfx12WmmaF32BF16W32 {
  static constexpr std::string_view kName = "GFX12_WMMA_16x16x16_F32BF16_W32";
  static constexpr int kWave = 32;
  using A = VecOperand<BF16Codec, 8>;
  using B = A;
  using C = VecOperand<F32Codec, 8>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX12_W32)
    return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a, b, c);
#else
    wrong_target();
#endif
  }
};

struct Gfx12WmmaF32F16W64 {
  static constexpr std::string_view kName = "GFX12_WMMA_16x16x16_F32F16_W64";
  static constexpr int kWave = 64;
  using A = VecOperand<F16Codec, 4>;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX12_W64)
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12(a, b, c);
#else
    wrong_target();
#endif
  }
};

struct Gfx12WmmaF32BF16W64 {
  static constexpr std::string_view kName = "GFX12_WMMA_16x16x16_F32BF16_W64";
  static constexpr int kWave = 64;
  using A = VecOperand<BF16Codec, 4>;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_GFX12_W64)
    return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w64_gfx12(a, b, c);
#else
    wrong_target();
#endif
  }
};

}  // namespace fp_amd
