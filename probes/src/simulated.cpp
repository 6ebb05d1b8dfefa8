#include "flashprobe/probes/simulated.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace flashprobe::probes {

std::string_view replica_rule_name(ReplicaRule r) { return r == ReplicaRule::partial ? "partial" : "poison"; }

SimulatedExecutor::Holders SimulatedExecutor::index(const OperandLayout& l) {
  Holders h;
  const auto hold = l.holders();
  h.offset.push_back(0);
  for (const auto& v : hold) {
    h.slots.insert(h.slots.end(), v.begin(), v.end());
    h.offset.push_back(static_cast<int>(h.slots.size()));
  }
  return h;
}

SimulatedExecutor::SimulatedExecutor(const AtomDesc& atom, MmaLayout layout, ReplicaRule rule)
    : atom_(atom), layout_(std::move(layout)), rule_(rule) {
  auto expect = [&](const OperandLayout& l, int rows, int cols, int slots, const char* what) {
    if (l.rows() != rows || l.cols() != cols || l.lanes() != atom.wave || l.slots() != slots)
      throw std::invalid_argument("SimulatedExecutor(" + atom.name + "): operand " + what + " is " +
                                  std::to_string(l.rows()) + "x" + std::to_string(l.cols()) + " over " +
                                  std::to_string(l.lanes()) + "x" + std::to_string(l.slots()) + ", the atom needs " +
                                  std::to_string(rows) + "x" + std::to_string(cols) + " over " +
                                  std::to_string(atom.wave) + "x" + std::to_string(slots));
  };
  expect(layout_.a, atom.m, atom.k, atom.a_slots, "A");
  expect(layout_.b, atom.k, atom.n, atom.b_slots, "B");
  expect(layout_.c, atom.m, atom.n, atom.c_slots, "C/D");
  if (!layout_.c.injective())
    throw std::invalid_argument("SimulatedExecutor(" + atom.name + "): C/D must hold each element at most once");
  a_ = index(layout_.a);
  b_ = index(layout_.b);
  c_holder_.assign(static_cast<std::size_t>(atom.m * atom.n), -1);
  for (int i = 0; i < layout_.c.size(); ++i) {
    const Coord c = layout_.c.at_flat(i);
    if (!c.ignored()) c_holder_[static_cast<std::size_t>(c.row * atom.n + c.col)] = i;
  }
}

std::string SimulatedExecutor::description() const {
  return "simulated on the CPU from a layout table (replicas: " + std::string(replica_rule_name(rule_)) + ")";
}

void SimulatedExecutor::run(const FragmentBatch& batch, std::vector<double>& d) {
  const int M = atom_.m, N = atom_.n, K = atom_.k;
  if (batch.wave != atom_.wave || batch.a_slots != atom_.a_slots || batch.b_slots != atom_.b_slots ||
      batch.c_slots != atom_.c_slots)
    throw std::invalid_argument("SimulatedExecutor(" + atom_.name + "): batch shape does not match the atom");
  d.assign(batch.d_size(), 0.0);
  std::vector<double> av(a_.slots.size()), bv(b_.slots.size()), acc(static_cast<std::size_t>(M * N));
  std::vector<int> nz_a, nz_b;
  const int nc = atom_.wave * atom_.c_slots;
  for (int e = 0; e < batch.count; ++e) {
    const double* a = batch.a(e);
    const double* b = batch.b(e);
    const double* c = batch.c(e);
    double* out = d.data() + static_cast<std::size_t>(e) * static_cast<std::size_t>(nc);
    bool poison = false;
    // Gather each element's copies (rounded to the operand type); note the elements with any nonzero.
    auto gather = [&](const Holders& h, const double* frag, ElemType t, std::vector<double>& v, std::vector<int>& nz) {
      nz.clear();
      const int elems = static_cast<int>(h.offset.size()) - 1;
      for (int x = 0; x < elems; ++x) {
        bool any = false;
        for (int j = h.offset[static_cast<std::size_t>(x)]; j < h.offset[static_cast<std::size_t>(x) + 1]; ++j) {
          v[static_cast<std::size_t>(j)] = round_to_elem(t, frag[h.slots[static_cast<std::size_t>(j)]]);
          any = any || v[static_cast<std::size_t>(j)] != 0;
          if (v[static_cast<std::size_t>(j)] != v[static_cast<std::size_t>(h.offset[static_cast<std::size_t>(x)])]) poison = poison || rule_ == ReplicaRule::poison;
        }
        if (any) nz.push_back(x);
      }
    };
    gather(a_, a, atom_.a_type, av, nz_a);
    gather(b_, b, atom_.b_type, bv, nz_b);
    for (int x = 0; x < M * N; ++x) {
      const int h = c_holder_[static_cast<std::size_t>(x)];
      acc[static_cast<std::size_t>(x)] = h < 0 ? 0.0 : round_to_elem(atom_.c_type, c[h]);
    }
    // The copy of A element (m, k) read for column n, and of B element (k, n) for row m.
    auto a_at = [&](int x, int n) {
      const int lo = a_.offset[static_cast<std::size_t>(x)], cnt = a_.offset[static_cast<std::size_t>(x) + 1] - lo;
      return cnt == 0 ? 0.0 : av[static_cast<std::size_t>(lo + n % cnt)];
    };
    auto b_at = [&](int x, int m) {
      const int lo = b_.offset[static_cast<std::size_t>(x)], cnt = b_.offset[static_cast<std::size_t>(x) + 1] - lo;
      return cnt == 0 ? 0.0 : bv[static_cast<std::size_t>(lo + m % cnt)];
    };
    if (!poison) {
      // Sparse products: drive the loop from the sparser operand.
      if (nz_a.size() * static_cast<std::size_t>(N) <= nz_b.size() * static_cast<std::size_t>(M)) {
        for (int x : nz_a) {
          const int m = x / K, k = x % K;
          for (int n = 0; n < N; ++n) {
            const double va = a_at(x, n);
            if (va == 0) continue;
            acc[static_cast<std::size_t>(m * N + n)] += va * b_at(k * N + n, m);
          }
        }
      } else {
        for (int x : nz_b) {
          const int k = x / N, n = x % N;
          for (int m = 0; m < M; ++m) {
            const double vb = b_at(x, m);
            if (vb == 0) continue;
            acc[static_cast<std::size_t>(m * N + n)] += a_at(m * K + k, n) * vb;
          }
        }
      }
    }
    for (int i = 0; i < nc; ++i) {
      const Coord co = layout_.c.at_flat(i);
      if (co.ignored()) out[i] = c[i];
      else if (poison) out[i] = std::numeric_limits<double>::quiet_NaN();
      else out[i] = round_to_elem(atom_.c_type, acc[static_cast<std::size_t>(co.row * N + co.col)]);
    }
  }
}

}  // namespace flashprobe::probes
