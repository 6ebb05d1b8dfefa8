#pragma once
// The probe's experiment kernel for one AMD atom (flashprobe/atoms/amd_matrix.cuh): one experiment
// per wave, kWavesPerBlock waves per block, any number of experiments per launch. Operands are flat
// float arrays laid out [experiment][lane][slot] (slot counts from the atom), converted exactly to
// the atom's element types, packed into registers as the atom's mma() takes them, run through that
// same mma() — the one the mma kernel calls — and unpacked back to float.
//
//   launch_atom_experiments<flashprobe::atoms::GFX11_WMMA_16x16x16_F32F16_W32>(n, a, b, c, d);
//
// Whole waves either run or return together (the guard is per experiment = per wave): WMMA and
// MFMA read every lane of the wave, so a partially active wave would probe garbage.
#include <cstddef>
#include <cstdint>

#include "flashprobe/atoms/amd_matrix.cuh"
#include "flashprobe/probes/amd/arch.cuh"
#include "flashprobe/probes/amd/atoms.h"
#include "flashprobe/probes/amd/elements.h"

namespace fp_amd {

inline constexpr int kWavesPerBlock = 4;
using flashprobe::atoms::AtomElem;

// Exact conversions between the probe's floats and an element's bits (the host has checked that
// every value is representable).
template <AtomElem E>
FP_DEV std::uint32_t encode(float x) {
  if constexpr (E == AtomElem::f16) return __builtin_bit_cast(std::uint16_t, static_cast<_Float16>(x));
  else if constexpr (E == AtomElem::bf16) return bf16_bits(x);
  else if constexpr (E == AtomElem::e4m3) return e4m3_bits(x);
  else if constexpr (E == AtomElem::e4m3fnuz) return e4m3fnuz_bits(x);
  else if constexpr (E == AtomElem::e5m2) return e5m2_bits(x);
  else {
    static_assert(E == AtomElem::e5m2fnuz, "no operand encoding for this element type");
    return e5m2fnuz_bits(x);
  }
}
template <AtomElem E>
FP_DEV float decode(std::uint32_t bits) {
  if constexpr (E == AtomElem::f16) return static_cast<float>(__builtin_bit_cast(_Float16, static_cast<std::uint16_t>(bits)));
  else return bf16_value(static_cast<std::uint16_t>(bits));
}

// kRegs registers of E elements from consecutive floats, in the atoms' packing.
template <AtomElem E, int kRegs>
FP_DEV void load_regs(const float* p, std::uint32_t (&regs)[kRegs]) {
  constexpr int kBits = flashprobe::atoms::elem_bits(E), kSlots = kRegs * 32 / kBits;
  std::uint32_t bits[kSlots];
#pragma unroll
  for (int i = 0; i < kSlots; ++i) bits[i] = encode<E>(p[i]);
#pragma unroll
  for (int r = 0; r < kRegs; ++r) regs[r] = flashprobe::atoms::pack_register<kBits>(bits, r);
}

template <class Atom>
__global__ void __launch_bounds__(kWavesPerBlock * Atom::kWave)
    atom_experiments(int n, const float* __restrict__ a, const float* __restrict__ b,
                     const float* __restrict__ c, float* __restrict__ d) {
  // A wave32 atom in a wave64 code object (or the reverse) would pair the wrong lanes: trap.
  if constexpr (fp_dev::kWaveSize != Atom::kWave) wrong_target();
  const int lane = static_cast<int>(threadIdx.x) % Atom::kWave;
  const int e = static_cast<int>(blockIdx.x) * kWavesPerBlock + static_cast<int>(threadIdx.x) / Atom::kWave;
  if (e >= n) return;
  const std::size_t row = static_cast<std::size_t>(e) * Atom::kWave + lane;
  std::uint32_t ar[Atom::kARegs], br[Atom::kBRegs];
  load_regs<Atom::kInA>(a + row * Atom::kA, ar);
  load_regs<Atom::kInB>(b + row * Atom::kB, br);
  if constexpr (Atom::kAcc == AtomElem::f32) {
    float dr[Atom::kC];
#pragma unroll
    for (int i = 0; i < Atom::kC; ++i) dr[i] = c[row * Atom::kC + i];
    Atom::mma(dr, ar, br);
#pragma unroll
    for (int i = 0; i < Atom::kC; ++i) d[row * Atom::kC + i] = dr[i];
  } else {
    std::uint32_t dr[Atom::kDRegs];
    load_regs<Atom::kAcc>(c + row * Atom::kC, dr);
    Atom::mma(dr, ar, br);
#pragma unroll
    for (int i = 0; i < Atom::kC; ++i)
      d[row * Atom::kC + i] = decode<Atom::kAcc>(flashprobe::atoms::unpack_slot<16>(dr, i));
  }
}

template <class Atom>
void launch_atom_experiments(int n, const float* a, const float* b, const float* c, float* d) {
  if (n <= 0) return;
  const int blocks = (n + kWavesPerBlock - 1) / kWavesPerBlock;
  atom_experiments<Atom><<<blocks, kWavesPerBlock * Atom::kWave>>>(n, a, b, c, d);
}

// The host table's name for an atom's element type (-1: none, so a comparison fails).
constexpr flashprobe::probes::amd::AmdElem table_elem(AtomElem e) {
  using flashprobe::probes::amd::AmdElem;
  switch (e) {
    case AtomElem::f16: return AmdElem::f16;
    case AtomElem::bf16: return AmdElem::bf16;
    case AtomElem::e4m3fnuz: return AmdElem::fp8_e4m3fnuz;
    case AtomElem::e4m3: return AmdElem::fp8_e4m3;
    case AtomElem::e5m2fnuz: return AmdElem::bf8_e5m2fnuz;
    case AtomElem::e5m2: return AmdElem::bf8_e5m2;
    case AtomElem::f32: return AmdElem::f32;
    default: return static_cast<AmdElem>(-1);
  }
}

// The atom and the host table (atoms.h) describe the same instruction (shape, slots and the element
// types of A, B and C/D): checked at compile time by every .cu that instantiates an atom.
template <class Atom>
constexpr bool agrees_with_table() {
  const auto* s = flashprobe::probes::amd::find_amd_atom(Atom::kName);
  return s != nullptr && s->wave == Atom::kWave && s->m == Atom::M && s->n == Atom::N && s->k == Atom::K &&
         s->a_slots == Atom::kA && s->b_slots == Atom::kB && s->c_slots == Atom::kC &&
         s->a_in == table_elem(Atom::kInA) && s->b_in == table_elem(Atom::kInB) && s->acc == table_elem(Atom::kAcc);
}

}  // namespace fp_amd
