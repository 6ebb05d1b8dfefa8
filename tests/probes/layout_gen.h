#pragma once
// Random layouts for the engine's properties: GF(2)-linear maps or arbitrary permutations from
// hardware bits to matrix positions, optionally replicated along lane bits (A and B) and with
// ignored lanes or slots. Replicas always differ by XOR of lane bits, as in every documented atom.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "flashprobe/probes/atom.h"
#include "flashprobe/probes/layout.h"

namespace fp_test {
using namespace flashprobe::probes;

inline int log2i(int n) {
  int b = 0;
  while ((1 << b) < n) ++b;
  return b;
}

struct OperandSpec {
  bool linear = true;
  int rep_bits = 0;       // lane bits that replicate (0..2)
  int ignore = 0;         // 0 none, 1 every other slot (by an inserted slot bit), 2 half the lanes, 3 random slots
};

// A rows x cols operand over `lanes` lanes; the slot count follows from the spec.
inline OperandLayout random_operand(std::mt19937_64& rng, int rows, int cols, int lanes, OperandSpec spec) {
  const int e_bits = log2i(rows * cols), l_bits = log2i(lanes);
  const int active_lane_bits = l_bits - (spec.ignore == 2 ? 1 : 0);
  int s0_bits = e_bits + spec.rep_bits - active_lane_bits;
  if (s0_bits < 0) {  // more lanes than elements: replicate along the missing lane bits
    spec.rep_bits -= s0_bits;
    s0_bits = 0;
  }
  const int s0 = 1 << s0_bits;
  // Lane bits: which one is the ignore bit (mode 2), which replicate, the rest carry the element.
  std::vector<int> lb(static_cast<std::size_t>(l_bits));
  std::iota(lb.begin(), lb.end(), 0);
  std::shuffle(lb.begin(), lb.end(), rng);
  const int ign_lane_bit = spec.ignore == 2 ? lb.back() : -1;
  if (spec.ignore == 2) lb.pop_back();
  const int ign_lane_val = static_cast<int>(rng() & 1);
  std::vector<int> rep(lb.begin(), lb.begin() + spec.rep_bits), carry(lb.begin() + spec.rep_bits, lb.end());
  std::sort(carry.begin(), carry.end());
  // Slots: mode 1 inserts an ignore bit at a random position; mode 3 spreads s0 used slots over more.
  int slots = s0;
  std::vector<int> phys_slot(static_cast<std::size_t>(s0));
  std::iota(phys_slot.begin(), phys_slot.end(), 0);
  if (spec.ignore == 1) {
    const int pos = static_cast<int>(rng() % static_cast<unsigned>(s0_bits + 1)), val = static_cast<int>(rng() & 1);
    slots = 2 * s0;
    for (int s = 0; s < s0; ++s) {
      const int lo = s & ((1 << pos) - 1), hi = s >> pos;
      phys_slot[static_cast<std::size_t>(s)] = (hi << (pos + 1)) | (val << pos) | lo;
    }
  } else if (spec.ignore == 3) {
    slots = s0 + 1 + static_cast<int>(rng() % static_cast<unsigned>(s0));
    std::vector<int> pick(static_cast<std::size_t>(slots));
    std::iota(pick.begin(), pick.end(), 0);
    std::shuffle(pick.begin(), pick.end(), rng);
    pick.resize(static_cast<std::size_t>(s0));
    std::sort(pick.begin(), pick.end());
    phys_slot = pick;
  }
  // Element of a hardware index y (s0_bits slot bits, then the carrying lane bits).
  const int y_bits = s0_bits + static_cast<int>(carry.size());
  std::vector<int> elem(static_cast<std::size_t>(1) << y_bits);
  if (spec.linear) {
    // A random invertible matrix over GF(2): columns are the images of the y bits.
    std::vector<std::uint32_t> cols_img;
    for (;;) {
      cols_img.clear();
      for (int i = 0; i < y_bits; ++i) cols_img.push_back(static_cast<std::uint32_t>(rng() & ((1u << e_bits) - 1)));
      std::vector<std::uint32_t> basis = cols_img;  // rank check by elimination
      int rank = 0;
      for (int bit = e_bits - 1; bit >= 0; --bit) {
        auto it = std::find_if(basis.begin() + rank, basis.end(), [&](std::uint32_t v) { return (v >> bit) & 1; });
        if (it == basis.end()) continue;
        std::swap(*it, basis[static_cast<std::size_t>(rank)]);
        for (std::size_t j = 0; j < basis.size(); ++j)
          if (static_cast<int>(j) != rank && ((basis[j] >> bit) & 1)) basis[j] ^= basis[static_cast<std::size_t>(rank)];
        ++rank;
      }
      if (rank == e_bits) break;
    }
    for (int y = 0; y < (1 << y_bits); ++y) {
      std::uint32_t e = 0;
      for (int i = 0; i < y_bits; ++i)
        if ((y >> i) & 1) e ^= cols_img[static_cast<std::size_t>(i)];
      elem[static_cast<std::size_t>(y)] = static_cast<int>(e);
    }
  } else {
    std::iota(elem.begin(), elem.end(), 0);
    std::shuffle(elem.begin(), elem.end(), rng);
  }
  const int col_bits = log2i(cols);
  OperandLayout l(rows, cols, lanes, slots);
  for (int lane = 0; lane < lanes; ++lane) {
    if (ign_lane_bit >= 0 && ((lane >> ign_lane_bit) & 1) != ign_lane_val) continue;
    int y_lane = 0;
    for (std::size_t i = 0; i < carry.size(); ++i) y_lane |= ((lane >> carry[i]) & 1) << i;
    for (int s = 0; s < s0; ++s) {
      const int e = elem[static_cast<std::size_t>(s | (y_lane << s0_bits))];
      l.set(lane, phys_slot[static_cast<std::size_t>(s)], Coord{e >> col_bits, e & ((1 << col_bits) - 1)});
    }
  }
  return l;
}

struct RandomAtom {
  AtomDesc atom;
  std::string summary;
};

// An atom whose expected layout is random; A/B may replicate, C/D never does.
inline RandomAtom random_atom(std::uint64_t seed, int m, int n, int k, int wave, bool linear, int rep_a, int rep_b,
                              int ign_a, int ign_b, int ign_c) {
  std::mt19937_64 rng(seed);
  AtomDesc a;
  a.name = "RANDOM";
  a.vendor = Vendor::amd;
  a.m = m;
  a.n = n;
  a.k = k;
  a.a_type = a.b_type = ElemType::f16;
  a.c_type = ElemType::f32;
  a.wave = wave;
  MmaLayout l{random_operand(rng, m, k, wave, {linear, rep_a, ign_a}), random_operand(rng, k, n, wave, {linear, rep_b, ign_b}),
              random_operand(rng, m, n, wave, {linear, 0, ign_c})};
  a.a_slots = l.a.slots();
  a.b_slots = l.b.slots();
  a.c_slots = l.c.slots();
  a.expected = l;
  a.source = {"random layout", "seed " + std::to_string(seed)};
  RandomAtom r{a, std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " wave" +
                      std::to_string(wave) + (linear ? " linear" : " permutation") + " rep " + std::to_string(rep_a) +
                      "/" + std::to_string(rep_b) + " ignore " + std::to_string(ign_a) + "/" + std::to_string(ign_b) +
                      "/" + std::to_string(ign_c) + " seed " + std::to_string(seed)};
  return r;
}

}  // namespace fp_test
