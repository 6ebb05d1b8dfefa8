#include "packing.h"

#include <algorithm>
#include <cmath>

namespace flashprobe::probes::packing {

Effect effect(const double* d, const std::vector<char>& used, double one) {
  Effect e;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) continue;
    const double v = d[i];
    if (v == one) e.lit.push_back(static_cast<int>(i));
    else if (v != 0 && e.bad++ == 0) {
      e.bad_slot = static_cast<int>(i);
      e.bad_value = v;
    }
  }
  return e;
}

int pack_width(ElemType operand, ElemType accumulator, int cap) {
  int w = 0;
  while (w < cap && exact_in(operand, std::ldexp(1.0, w)) && exact_in(accumulator, std::ldexp(1.0, w + 1) - 1)) ++w;
  return std::max(w, 1);
}

std::vector<std::vector<int>> make_packs(int n, int width) {
  if (n <= 0) return {};
  int packs = (n + width - 1) / width;
  if (packs > 1 && packs % 2 == 0) packs = std::min(packs + 1, n);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(packs));
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i % packs)].push_back(i);
  return out;
}

Decoded decode(const double* d, const std::vector<char>& used, int width) {
  Decoded p;
  p.members.resize(static_cast<std::size_t>(width));
  const double limit = std::ldexp(1.0, width);
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) continue;
    const double v = d[i];
    if (!(v >= 0 && v < limit && v == std::floor(v))) {  // NaN fails every comparison
      if (p.bad++ == 0) {
        p.bad_slot = static_cast<int>(i);
        p.bad_value = v;
      }
      continue;
    }
    const auto bits = static_cast<unsigned long>(v);
    for (int j = 0; j < width; ++j)
      if ((bits >> j) & 1u) p.members[static_cast<std::size_t>(j)].lit.push_back(static_cast<int>(i));
  }
  return p;
}

bool trusted(const Decoded& p, int full) {
  return p.bad == 0 && std::all_of(p.members.begin(), p.members.end(), [&](const Effect& e) {
           return e.lit.empty() || static_cast<int>(e.lit.size()) == full;
         });
}

}  // namespace flashprobe::probes::packing
