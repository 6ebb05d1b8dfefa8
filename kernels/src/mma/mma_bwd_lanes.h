#pragma once
// The ldmatrix.x4 lane addresses of the tensor-core backward (host and device code): lane t supplies
// the address of row t of the stack of four 8x8 matrices, as (tile row, 8-element chunk). Which
// matrix must hold what is the derivation of sm75_ldmatrix.h; tests/kernels/test_mma_bwd_fa2_plan.cpp
// composes these addresses with the ldmatrix layout and checks, lane by lane, that every register
// receives the element the atom's a() / b() names.
#include "flashprobe/atoms/layouts.h"

namespace flashprobe::kernels::dev {

struct LdsmLanes {
  // A from a row-major [m][k] tile (ldsm_feeds_a, m-major): matrix t / 8 holds row block (t / 8) % 2
  // and k block t / 16.
  FP_ATOM_HD static constexpr int a_row(int t) { return ((t >> 3) & 1) * 8 + (t & 7); }
  FP_ATOM_HD static constexpr int a_chunk(int t) { return t >> 4; }
  // A from a k-major [k][m] tile with .trans (ldsm_feeds_a, k-major): the same matrices, rows along k
  // (tile row = k, chunk = m block).
  FP_ATOM_HD static constexpr int akm_row(int t) { return (t >> 4) * 8 + (t & 7); }
  FP_ATOM_HD static constexpr int akm_chunk(int t) { return (t >> 3) & 1; }
  // The B fragments of two n-tiles from an n-major [n][k] tile (ldsm_feeds_b, NMajor): matrix t / 8
  // holds k block (t / 8) % 2 of n-tile t / 16.
  FP_ATOM_HD static constexpr int bn_row(int t) { return (t >> 4) * 8 + (t & 7); }
  FP_ATOM_HD static constexpr int bn_chunk(int t) { return (t >> 3) & 1; }
  // The same from a k-major [k][n] tile with .trans (rows along k).
  FP_ATOM_HD static constexpr int bk_row(int t) { return ((t >> 3) & 1) * 8 + (t & 7); }
  FP_ATOM_HD static constexpr int bk_chunk(int t) { return t >> 4; }
};

}  // namespace flashprobe::kernels::dev
