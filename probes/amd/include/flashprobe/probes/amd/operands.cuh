#pragma once
// How an atom operand travels between the probe's float arrays and the instruction's registers:
// Operand::load(p) converts kSlots consecutive floats into the builtin's fragment type and
// Operand::store(f, p) converts back. Every conversion is exact for values the element type can
// hold (the host checks that before launching), so the probe sees the instruction, not rounding.
//
//   using A = VecOperand<F16Codec, 16>;    // A::Frag is the v16f16 of the gfx11 WMMA builtins
//   A::Frag a = A::load(&in[lane * 16]);
#include <cstdint>

#include "flashprobe/probes/amd/arch.cuh"
#include "flashprobe/probes/amd/elements.h"

namespace fp_amd {

struct F16Codec {
  using Elem = _Float16;
  FP_DEV static Elem enc(float x) { return static_cast<_Float16>(x); }
  FP_DEV static float dec(Elem e) { return static_cast<float>(e); }
};
// clang 15-19 declare the bf16 WMMA/MFMA builtins on 16-bit integer vectors (the raw bits). Newer
// clangs may declare some on __bf16 vectors; clang's default lax vector conversions accept either
// for the other (checked with clang-19 both ways), so short stays right until a compiler turns
// those conversions off (-flax-vector-conversions=none).
struct BF16Codec {
  using Elem = short;
  FP_DEV static Elem enc(float x) { return static_cast<short>(bf16_bits(x)); }
  FP_DEV static float dec(Elem e) { return bf16_value(static_cast<std::uint16_t>(e)); }
};
struct F32Codec {
  using Elem = float;
  FP_DEV static Elem enc(float x) { return x; }
  FP_DEV static float dec(Elem e) { return e; }
};

template <class Codec, int N>
struct VecOperand {
  using Elem = typename Codec::Elem;
  typedef Elem Frag __attribute__((ext_vector_type(N)));
  static constexpr int kSlots = N;
  FP_DEV static Frag load(const float* p) {
    Frag f;
#pragma unroll
    for (int i = 0; i < N; ++i) f[i] = Codec::enc(p[i]);
    return f;
  }
  FP_DEV static void store(const Frag& f, float* p) {
#pragma unroll
    for (int i = 0; i < N; ++i) p[i] = Codec::dec(f[i]);
  }
};

// Eight FNUZ fp8 values in one 64-bit register pair, slot i in byte i (the gfx94x MFMA fp8 builtins
// take a long).
struct Fp8x8Operand {
  using Frag = long;
  static constexpr int kSlots = 8;
  FP_DEV static Frag load(const float* p) {
    unsigned long long bits = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) bits |= static_cast<unsigned long long>(e4m3fnuz_bits(p[i])) << (8 * i);
    return static_cast<long>(bits);
  }
};

}  // namespace fp_amd
