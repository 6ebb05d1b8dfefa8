#pragma once
// The strongest single check of a register layout: fill A, B and C with random small integers,
// place them into the fragments through the claimed (lane, slot) -> (row, col) maps, run the
// instruction, and compare every D slot with the exact product computed on the host. A wrong map
// entry breaks the sum of many D elements at once. Integers in [-3, 3] keep every partial sum
// exact in f32 (and in s32), so equality is exact.
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ptx_expected.h"

namespace flashprobe::nvidia::testing {

using Map = std::function<ptx::RC(int lane, int slot)>;

struct ProductCase {
  int m, n, k;
  int lanes;
  int a_slots, b_slots, c_slots;
  Map a, b, c;
};

struct Operands {
  std::vector<float> a, b, c;                      // per (experiment, lane, slot)
  std::vector<std::vector<double>> expected_d;     // per experiment, M x N row-major
};

inline Operands make_operands(const ProductCase& pc, int experiments, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> val(-3, 3);
  Operands o;
  o.a.resize(static_cast<std::size_t>(experiments) * pc.lanes * pc.a_slots);
  o.b.resize(static_cast<std::size_t>(experiments) * pc.lanes * pc.b_slots);
  o.c.resize(static_cast<std::size_t>(experiments) * pc.lanes * pc.c_slots);
  for (int e = 0; e < experiments; ++e) {
    std::vector<double> A(pc.m * pc.k), B(pc.k * pc.n), C(pc.m * pc.n), D(pc.m * pc.n);
    for (auto& x : A) x = val(rng);
    for (auto& x : B) x = val(rng);
    for (auto& x : C) x = val(rng);
    for (int i = 0; i < pc.m; ++i)
      for (int j = 0; j < pc.n; ++j) {
        double s = C[i * pc.n + j];
        for (int kk = 0; kk < pc.k; ++kk) s += A[i * pc.k + kk] * B[kk * pc.n + j];
        D[i * pc.n + j] = s;
      }
    for (int l = 0; l < pc.lanes; ++l) {
      const std::size_t base = static_cast<std::size_t>(e) * pc.lanes + l;
      for (int s = 0; s < pc.a_slots; ++s) {
        const auto rc = pc.a(l, s);
        o.a[base * pc.a_slots + s] = static_cast<float>(A[rc.row * pc.k + rc.col]);
      }
      for (int s = 0; s < pc.b_slots; ++s) {
        const auto rc = pc.b(l, s);
        o.b[base * pc.b_slots + s] = static_cast<float>(B[rc.row * pc.n + rc.col]);
      }
      for (int s = 0; s < pc.c_slots; ++s) {
        const auto rc = pc.c(l, s);
        o.c[base * pc.c_slots + s] = static_cast<float>(C[rc.row * pc.n + rc.col]);
      }
    }
    o.expected_d.push_back(std::move(D));
  }
  return o;
}

// The first D slot that differs from the host product, described; empty when all agree.
inline std::string first_product_mismatch(const ProductCase& pc, const Operands& o, const std::vector<float>& d) {
  const int experiments = static_cast<int>(o.expected_d.size());
  for (int e = 0; e < experiments; ++e)
    for (int l = 0; l < pc.lanes; ++l)
      for (int s = 0; s < pc.c_slots; ++s) {
        const auto rc = pc.c(l, s);
        const double want = o.expected_d[e][rc.row * pc.n + rc.col];
        const float got = d[(static_cast<std::size_t>(e) * pc.lanes + l) * pc.c_slots + s];
        if (static_cast<double>(got) != want)
          return "experiment " + std::to_string(e) + " lane " + std::to_string(l) + " slot " + std::to_string(s) +
                 " (D[" + std::to_string(rc.row) + "][" + std::to_string(rc.col) + "]): got " + std::to_string(got) +
                 ", expected " + std::to_string(want);
      }
  return {};
}

// Prefixes a measured map's description with the operand's name ("A: ..."), for failure messages.
inline OperandMap named(OperandMap m, const std::string& operand) {
  m.what = operand + ": " + m.what;
  return m;
}

}  // namespace flashprobe::nvidia::testing
