#pragma once
// CDNA (gfx908/gfx90a/gfx94x) MFMA atoms, wave64 only, behind __builtin_amdgcn_mfma_*. The cbsz,
// abid and blgp broadcast controls are 0: every lane contributes its own A and B values.
//   32x32x8  f16/bf16: A, B v4 per lane, C/D v16f32 (gfx90a+ may place C/D in AGPRs)
//   16x16x16 f16/bf16: A, B v4 per lane, C/D v4f32
//   16x16x32 fp8 (gfx940/941/942): A, B eight FNUZ fp8 in one 64-bit pair, C/D v4f32
// gfx94x prints the f16/bf16 forms with an underscore (v_mfma_f32_32x32x8_f16, and the bf16_1k
// forms as v_mfma_f32_32x32x8_bf16); gfx908/gfx90a print v_mfma_f32_32x32x8f16 and ..bf16_1k.
// Sources: "AMD Instinct MI300 (CDNA3) Instruction Set Architecture", chapter "Matrix Arithmetic Instructions" (MFMA,
// its operand layout tables); the AMD Matrix Instruction Calculator
// (github.com/ROCm/amd_matrix_instruction_calculator); the AMD lab notes "AMD matrix cores".
//
//   using Atom = fp_amd::CdnaMfma32x32x8F32F16;
//   Atom::C::Frag d = Atom::mma(a, b, c);     // a, b: v4f16, c: v16f32
#include <string_view>

#include "flashprobe/probes/amd/operands.cuh"

namespace fp_amd {

struct CdnaMfma32x32x8F32F16 {
  static constexpr std::string_view kName = "CDNA_MFMA_32x32x8_F32F16";
  static constexpr int kWave = 64;
  using A = VecOperand<F16Codec, 4>;
  using B = A;
  using C = VecOperand<F32Codec, 16>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_MFMA_F16)
    return __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
#else
    wrong_target();
#endif
  }
};

struct CdnaMfma16x16x16F32F16 {
  static constexpr std::string_view kName = "CDNA_MFMA_16x16x16_F32F16";
  static constexpr int kWave = 64;
  using A = VecOperand<F16Codec, 4>;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_MFMA_F16)
    return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
#else
    wrong_target();
#endif
  }
};

struct CdnaMfma32x32x8F32BF16 {
  static constexpr std::string_view kName = "CDNA_MFMA_32x32x8_F32BF16_1K";
  static constexpr int kWave = 64;
  using A = VecOperand<BF16Codec, 4>;
  using B = A;
  using C = VecOperand<F32Codec, 16>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_MFMA_BF16_1K)
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
#else
    wrong_target();
#endif
  }
};

struct CdnaMfma16x16x16F32BF16 {
  static constexpr std::string_view kName = "CDNA_MFMA_16x16x16_F32BF16_1K";
  static constexpr int kWave = 64;
  using A = VecOperand<BF16Codec, 4>;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_MFMA_BF16_1K)
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
#else
    wrong_target();
#endif
  }
};

struct Cdna3Mfma16x16x32F32Fp8 {
  static constexpr std::string_view kName = "CDNA_MFMA_16x16x32_F32E4M3";
  static constexpr int kWave = 64;
  using A = Fp8x8Operand;
  using B = A;
  using C = VecOperand<F32Codec, 4>;
  FP_DEV static C::Frag mma(A::Frag a, B::Frag b, C::Frag c) {
#if defined(FP_AMD_MFMA_FP8_FNUZ)
    return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, c, 0, 0, 0);
#else
    wrong_target();
#endif
  }
};

}  // namespace fp_amd
