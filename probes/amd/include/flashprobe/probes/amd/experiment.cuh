#pragma once
// The probe's experiment kernel for one AMD atom: one experiment per wave, kWavesPerBlock waves per
// block, any number of experiments per launch. Operands are flat float arrays laid out
// [experiment][lane][slot] (slot counts from the atom), converted exactly to the atom's element
// types on the way in and back to float on the way out.
//
//   launch_atom_experiments<fp_amd::Gfx11WmmaF32F16W32>(n, a, b, c, d, stream);  // device pointers
//
// Whole waves either run or return together (the guard is per experiment = per wave): WMMA and
// MFMA read every lane of the wave, so a partially active wave would probe garbage.
#include <cstddef>

#include "flashprobe/probes/amd/atoms.h"
#include "flashprobe/probes/amd/operands.cuh"

namespace fp_amd {

inline constexpr int kWavesPerBlock = 4;

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
  const auto fa = Atom::A::load(a + row * Atom::A::kSlots);
  const auto fb = Atom::B::load(b + row * Atom::B::kSlots);
  const auto fc = Atom::C::load(c + row * Atom::C::kSlots);
  Atom::C::store(Atom::mma(fa, fb, fc), d + row * Atom::C::kSlots);
}

template <class Atom>
void launch_atom_experiments(int n, const float* a, const float* b, const float* c, float* d) {
  if (n <= 0) return;
  const int blocks = (n + kWavesPerBlock - 1) / kWavesPerBlock;
  atom_experiments<Atom><<<blocks, kWavesPerBlock * Atom::kWave>>>(n, a, b, c, d);
}

// The device struct and the host table (atoms.h) describe the same instruction: checked at compile
// time by every .cu that instantiates an atom.
template <class Atom>
constexpr bool agrees_with_table() {
  const auto* s = flashprobe::probes::amd::find_amd_atom(Atom::kName);
  return s != nullptr && s->wave == Atom::kWave && s->a_slots == Atom::A::kSlots &&
         s->b_slots == Atom::B::kSlots && s->c_slots == Atom::C::kSlots;
}

}  // namespace fp_amd
