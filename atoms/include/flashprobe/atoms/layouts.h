#pragma once
// Kernel-facing atoms: one matrix instruction on one target as data plus one function.
//
// An atom type provides
//   kName               the name the probe registry uses (probes/, `flashprobe list atoms`)
//   M, N, K, kWave      the tile D[MxN] += A[MxK] * B[KxN] one wave computes
//   kA, kB, kC          elements per lane of A, B and C/D
//   a(lane, slot), b(lane, slot), c(lane, slot) -> Coord{row, col}
//                       the register layout: which matrix element a lane's slot holds (A: row = m,
//                       col = k; B: row = k, col = n; C/D: row = m, col = n)
//   mma(d, a, b)        d += a * b, fragments as 32-bit registers, slot s in register s / 2,
//                       low half for even s (the packing of PTX .f16x2 and of AMD vector types;
//                       8-bit elements four per register, atom_layout.cuh pack_register)
// Kernels place data in registers only through a(), b(), c() — never with lane arithmetic of their
// own — the probe registry declares exactly these layouts (tests/atoms/test_atoms_match_registry.cpp)
// and the probe executors run these atoms' mma(); the H100 probe records derived the NVIDIA ones.
//
// Derived facts (compile time, this header): which lanes share a row of C (the shuffle-xor masks a
// row reduction needs), which local row a C slot belongs to, and whether a C fragment can be reused
// as an A fragment in place (FlashAttention's P = softmax(S) fed to P·V without shared memory).
#include <cstdint>

// Layout functions are constexpr and callable on the host (CPU tests, the probe registry) and on
// the device (kernels); this header needs no GPU compiler.
#if defined(__CUDACC__) || defined(__HIP__)
#define FP_ATOM_HD __host__ __device__
#else
#define FP_ATOM_HD
#endif

namespace flashprobe::atoms {

struct Coord {
  int row, col;
  constexpr bool operator==(const Coord&) const = default;
};
// Element types of atom operands, and their width in bits (the register packing follows from it).
// e4m3fnuz / e5m2fnuz: gfx940/941/942's fp8 / bf8 (bias 8 / 16, no negative zero, no infinity);
// e4m3 / e5m2: OCP FP8 E4M3 / E5M2 (gfx12, gfx950).
enum class AtomElem { f16, bf16, e4m3fnuz, e4m3, e5m2fnuz, e5m2, s8, f32, s32 };
constexpr int elem_bits(AtomElem e) {
  switch (e) {
    case AtomElem::f16:
    case AtomElem::bf16: return 16;
    case AtomElem::e4m3fnuz:
    case AtomElem::e4m3:
    case AtomElem::e5m2fnuz:
    case AtomElem::e5m2:
    case AtomElem::s8: return 8;
    case AtomElem::f32:
    case AtomElem::s32: return 32;
  }
  return 32;
}
// A slot the instruction neither reads nor writes (gfx11's 16-bit accumulators: the half of each
// register that OPSEL does not select).
inline constexpr Coord kIgnoredSlot{-1, -1};

// Row structure of an atom's C layout, derived from c(): `rows` local rows per lane, slot s belongs
// to local row `local[s]`, and lanes that differ only in the bits of `lane_mask` hold the same rows.
template <class Atom>
struct CRows {
  static constexpr int kMaxSlots = 128;  // wgmma m64n256: 128 accumulators per thread
  int rows = 0;
  int local[kMaxSlots] = {};
  int lane_mask = 0;  // OR of the single-bit xor masks that keep every slot's row
  bool consistent = false;
};

template <class Atom>
constexpr CRows<Atom> derive_c_rows() {
  CRows<Atom> r;
  // Local row index of each slot: order of first appearance of its row in lane 0.
  int seen[CRows<Atom>::kMaxSlots] = {};
  for (int s = 0; s < Atom::kC; ++s) {
    const int row = Atom::c(0, s).row;
    int idx = -1;
    for (int q = 0; q < r.rows; ++q)
      if (seen[q] == row) idx = q;
    if (idx < 0) {
      seen[r.rows] = row;
      idx = r.rows++;
    }
    r.local[s] = idx;
  }
  // Every lane must group its slots the same way (slot s and t share a row iff local[s] == local[t]):
  // each slot's row equals that of its local row's first slot, and the local rows' rows differ.
  // (Linear in lanes x slots: wgmma's 128 lanes x 128 slots must stay within constexpr step limits.)
  int first[CRows<Atom>::kMaxSlots] = {};
  for (int s = Atom::kC - 1; s >= 0; --s) first[r.local[s]] = s;
  bool ok = true;
  for (int l = 0; l < Atom::kWave; ++l) {
    for (int s = 0; s < Atom::kC; ++s)
      if (Atom::c(l, s).row != Atom::c(l, first[r.local[s]]).row) ok = false;
    for (int q = 0; q < r.rows; ++q)
      for (int q2 = q + 1; q2 < r.rows; ++q2)
        if (Atom::c(l, first[q]).row == Atom::c(l, first[q2]).row) ok = false;
  }
  // Single-bit lane masks that map every (lane, slot) to a lane holding the same row in that slot.
  for (int m = 1; m < Atom::kWave; m <<= 1) {
    bool keeps = true;
    for (int l = 0; l < Atom::kWave; ++l)
      for (int s = 0; s < Atom::kC; ++s)
        if (Atom::c(l ^ m, s).row != Atom::c(l, s).row) keeps = false;
    if (keeps) r.lane_mask |= m;
  }
  // Completeness: lanes holding the same row in some slot differ only inside lane_mask, so a
  // shuffle-xor tree over those bits combines exactly the lanes of a row. Per (slot, row) the first
  // lane seen is the representative; every other lane with that row must share its bits outside
  // the mask.
  constexpr int kMaxRows = 64;
  int rep[kMaxRows] = {};
  for (int s = 0; s < Atom::kC; ++s) {
    for (int x = 0; x < kMaxRows; ++x) rep[x] = -1;
    for (int l = 0; l < Atom::kWave; ++l) {
      const int row = Atom::c(l, s).row;
      if (row < 0 || row >= kMaxRows) {
        ok = false;
        continue;
      }
      if (rep[row] < 0) rep[row] = l;
      else if (((rep[row] ^ l) & ~r.lane_mask) != 0) ok = false;
    }
  }
  r.consistent = ok;
  return r;
}

// First C slot of each local row of an atom: where a lane finds that row's index.
template <class Atom>
constexpr int first_slot_of_row(const CRows<Atom>& rows, int rr) {
  for (int s = 0; s < Atom::kC; ++s)
    if (rows.local[s] == rr) return s;
  return 0;
}

// Whether C slots 2j and 2j + 1 of every lane hold columns c and c + 1 of one row, c even: two
// results of a lane pack into one 32-bit word of a row-major 16-bit tile or tensor.
template <class Atom>
constexpr bool c_pairs_along_n() {
  for (int l = 0; l < Atom::kWave; ++l)
    for (int r = 0; r < Atom::kC / 2; ++r) {
      const Coord x = Atom::c(l, 2 * r), y = Atom::c(l, 2 * r + 1);
      if (y.row != x.row || y.col != x.col + 1 || x.col % 2 != 0) return false;
    }
  return Atom::kC % 2 == 0;
}

// Where element (row, col) of an MxK A fragment of k-step `ks` sits in a row of C tiles of width N
// (P = S reused as A): for each A slot, the C tile and slot in the SAME lane, if that holds for
// every lane (then the conversion is register moves only), else `in_place = false`.
template <class Atom>
struct CToA {
  static constexpr int kMaxSlots = 128;
  static constexpr int kTilesPerK = (Atom::K + Atom::N - 1) / Atom::N;
  bool in_place = false;
  int tile[kMaxSlots] = {};  // C tile offset within the k-step (0 .. K/N - 1)
  int slot[kMaxSlots] = {};
};

template <class Atom>
constexpr CToA<Atom> derive_c_to_a() {
  CToA<Atom> r;
  if (Atom::K % Atom::N != 0) return r;
  bool ok = true;
  for (int s = 0; s < Atom::kA; ++s) {
    int found_t = -1, found_c = -1;
    // Candidate from lane 0, then verified for every lane.
    const Coord a0 = Atom::a(0, s);
    for (int t = 0; t < Atom::K / Atom::N; ++t)
      for (int cs = 0; cs < Atom::kC; ++cs) {
        const Coord c0 = Atom::c(0, cs);
        if (c0.row == a0.row && t * Atom::N + c0.col == a0.col) {
          found_t = t;
          found_c = cs;
        }
      }
    if (found_t < 0) { ok = false; break; }
    for (int l = 0; l < Atom::kWave; ++l) {
      const Coord a = Atom::a(l, s), c = Atom::c(l, found_c);
      if (c.row != a.row || found_t * Atom::N + c.col != a.col) ok = false;
    }
    r.tile[s] = found_t;
    r.slot[s] = found_c;
  }
  r.in_place = ok;
  return r;
}

// The same question when one C tile spans several k-steps of the next product (wgmma: S is one
// 64 x Bn accumulator tile, P·V takes it 16 keys at a time): for k-step ks of an A operand of atom
// AAtom and each A slot, the slot of the SAME lane in a C tile of CAtom that holds element
// (row, ks * AAtom::K + col), proven for every lane; `in_place = false` when any is missing.
template <class AAtom, class CAtom>
struct WideCToA {
  static constexpr int kSteps = CAtom::N / AAtom::K;
  bool in_place = false;
  int slot[kSteps][AAtom::kA] = {};
};

template <class AAtom, class CAtom>
constexpr WideCToA<AAtom, CAtom> derive_wide_c_to_a() {
  WideCToA<AAtom, CAtom> r;
  if (AAtom::kWave != CAtom::kWave || AAtom::M != CAtom::M || CAtom::N % AAtom::K != 0) return r;
  bool ok = true;
  for (int ks = 0; ks < r.kSteps; ++ks)
    for (int s = 0; s < AAtom::kA; ++s) {
      const Coord a0 = AAtom::a(0, s);
      int found = -1;
      for (int cs = 0; cs < CAtom::kC; ++cs) {
        const Coord c0 = CAtom::c(0, cs);
        if (c0.row == a0.row && c0.col == ks * AAtom::K + a0.col) found = cs;
      }
      if (found < 0) return r;
      for (int l = 0; l < AAtom::kWave; ++l) {
        const Coord a = AAtom::a(l, s), c = CAtom::c(l, found);
        if (c.row != a.row || c.col != ks * AAtom::K + a.col) ok = false;
      }
      r.slot[ks][s] = found;
    }
  r.in_place = ok;
  return r;
}

}  // namespace flashprobe::atoms
