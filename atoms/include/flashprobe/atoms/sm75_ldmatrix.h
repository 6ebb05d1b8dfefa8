#pragma once
// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 as a kernel-facing load layout: which
// element of the loaded stack of 8x8 b16 matrices (matrix j = memory rows 8j..8j+7, eight elements per
// row; thread t supplies the address of stack row t) each lane holds in each slot (slot 2j + h is
// half h of register j). PTX ISA, "ldmatrix" fragment figures; the probe registry's
// SM75_LDMATRIX_X{1,2,4}_B16[_TRANS] are built from it, and the H100 probe derived the same tables.
//
// ldsm_feeds_b<Atom, Ld, NMajor>() is the derivation the mma kernel relies on: one ldmatrix.x4 gives
// the B fragments (kB = 4 slots, K = 16, N = 8) of two adjacent n-tiles of Atom, matrix m holding
// k-block m % 2 of n-tile m / 2, from a shared tile stored n-major (K tile [key][dim], NMajor) or
// k-major (V tile [key][dim] read as B[key][dim], !NMajor).
//
// ldsm_feeds_a<Atom, Ld>() is the same for the A operand (kA = 8 slots, M = K = 16): one ldmatrix.x4
// (non-trans) from a row-major [m][k] tile gives the atom's whole A fragment, matrix m holding
// row-block m % 2 and k-block m / 2 (so lane t addresses tile row 8 * ((t / 8) % 2) + t % 8, column
// 8 * (t / 16)); the mma kernel reads Q from shared memory this way. ldsm_feeds_a<Atom, Ld, false>()
// is the k-major case ([k][m] tile, .trans: memory row i of matrix m is k, its column j is m), which
// the backward uses to read dS as A from the [key][query] tile it stores for dK.
#include "flashprobe/atoms/layouts.h"

namespace flashprobe::atoms {

// ldmatrix .x1/.x2/.x4 [.trans]: kMatrices 8x8 matrices stacked (matrix j = rows 8j..8j+7).
template <int kMatrices, bool Trans>
struct SM75_LDMATRIX_Layout {
  static_assert(kMatrices == 1 || kMatrices == 2 || kMatrices == 4, "ldmatrix loads 1, 2 or 4 matrices");
  static constexpr int kRows = 8 * kMatrices, kCols = 8, kWave = 32, kSlots = 2 * kMatrices;
  FP_ATOM_HD static constexpr Coord at(int lane, int s) {
    const int j = s >> 1, h = s & 1;
    return Trans ? Coord{8 * j + 2 * (lane & 3) + h, lane >> 2} : Coord{8 * j + (lane >> 2), 2 * (lane & 3) + h};
  }
};
template <bool Trans>
using SM75_LDMATRIX_X4_Layout = SM75_LDMATRIX_Layout<4, Trans>;

template <class Atom, class Ld, bool NMajor>
constexpr bool ldsm_feeds_b() {
  if (Atom::kWave != Ld::kWave || Atom::kB != 4 || Atom::K != 16 || Atom::N != 8) return false;
  for (int lane = 0; lane < Ld::kWave; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int h = 0; h < 2; ++h) {
        const Coord e = Ld::at(lane, 2 * m + h);
        if (e.row / 8 != m) return false;
        const int i = e.row % 8, j = e.col, r = m % 2;
        // n-major: memory row i is n, column j is k within k-block r; k-major: the other way round.
        const Coord want = NMajor ? Coord{8 * r + j, i} : Coord{8 * r + i, j};
        if (!(Atom::b(lane, 2 * r + h) == want)) return false;
      }
  return true;
}

template <class Atom, class Ld, bool MMajor = true>
constexpr bool ldsm_feeds_a() {
  if (Atom::kWave != Ld::kWave || Atom::kA != 8 || Atom::M != 16 || Atom::K != 16) return false;
  for (int lane = 0; lane < Ld::kWave; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int h = 0; h < 2; ++h) {
        const Coord e = Ld::at(lane, 2 * m + h);
        if (e.row / 8 != m) return false;
        // m-major: memory row i of matrix m is A row 8 * (m % 2) + i, its column j is k = 8 * (m / 2) + j;
        // k-major: memory row i is k = 8 * (m / 2) + i, column j is A row 8 * (m % 2) + j.
        const int i = e.row % 8, j = e.col;
        const Coord want = MMajor ? Coord{8 * (m % 2) + i, 8 * (m / 2) + j} : Coord{8 * (m % 2) + j, 8 * (m / 2) + i};
        if (!(Atom::a(lane, 2 * m + h) == want)) return false;
      }
  return true;
}

}  // namespace flashprobe::atoms
