#pragma once
// Greedy shrinking of a failing attention problem, for tests that find a failure without RapidCheck
// (the backward mutants, tests/kernels/test_backward_gpu.cpp): smaller_problems(p) lists valid
// problems one step simpler than p (fewer batch elements, heads, rows, keys, dims; a feature
// dropped; contiguous layout), and shrink_problem keeps taking the first of them that still fails
// until none does. Every step makes the problem strictly simpler, so it ends.
#include <functional>
#include <vector>

#include "flashprobe/core/problem.h"

namespace flashprobe::testing {

inline std::vector<AttnProblem> smaller_problems(const AttnProblem& p) {
  std::vector<AttnProblem> out;
  auto add = [&](AttnProblem c) {
    if (c.seqlens_k.size() > static_cast<std::size_t>(c.batch)) c.seqlens_k.resize(static_cast<std::size_t>(c.batch));
    for (int& n : c.seqlens_k) n = n > c.sk ? c.sk : n;
    if (c.alibi_slopes.size() > static_cast<std::size_t>(c.hq)) c.alibi_slopes.resize(static_cast<std::size_t>(c.hq));
    if (c.kv_offset > 0) c.kv_offset = 0;
    if (!(c == p) && !has_errors(problem_errors(c))) out.push_back(c);
  };
  auto contiguous = [](AttnProblem c) {
    c.q = c.k = c.v = c.o = Strides{};
    return c;
  };
  const bool strided = !(p.q.is_zero() && p.k.is_zero() && p.v.is_zero() && p.o.is_zero());
  // Shape changes resize the tensors: explicit strides go with them.
  auto reshaped = [&](AttnProblem c) { return strided ? contiguous(c) : c; };
  for (int b : {1, p.batch - 1})
    if (b >= 1 && b < p.batch) { AttnProblem c = reshaped(p); c.batch = b; add(c); }
  const int group = p.group();
  for (int kv : {1, p.hkv / 2})
    for (int g : {group, 1, group / 2})
      if (kv >= 1 && g >= 1 && (kv < p.hkv || g < group)) {
        AttnProblem c = reshaped(p);
        c.hkv = kv;
        c.hq = kv * g;
        add(c);
      }
  for (int s : {1, p.sq / 2, p.sq - 1})
    if (s >= 1 && s < p.sq) { AttnProblem c = reshaped(p); c.sq = s; add(c); }
  for (int s : {0, 1, p.sk / 2, p.sk - 1})
    if (s >= 0 && s < p.sk) { AttnProblem c = reshaped(p); c.sk = s; add(c); }
  for (int d : {8, p.d / 2 / 8 * 8})
    if (d >= 8 && d < p.d) { AttnProblem c = reshaped(p); c.d = d; if (c.dv == p.d) c.dv = d; add(c); }
  for (int d : {8, p.dv / 2 / 8 * 8})
    if (d >= 8 && d < p.dv) { AttnProblem c = reshaped(p); c.dv = d; add(c); }
  if (!p.seqlens_k.empty()) { AttnProblem c = p; c.seqlens_k.clear(); add(c); }
  if (p.softcap > 0) { AttnProblem c = p; c.softcap = 0; add(c); }
  if (!p.alibi_slopes.empty()) { AttnProblem c = p; c.alibi_slopes.clear(); add(c); }
  if (p.window_left >= 0) { AttnProblem c = p; c.window_left = -1; add(c); }
  if (p.window_right >= 0) { AttnProblem c = p; c.window_right = -1; add(c); }
  if (p.causal != Causal::none) { AttnProblem c = p; c.causal = Causal::none; add(c); }
  if (p.scale != 0) { AttnProblem c = p; c.scale = 0; add(c); }
  if (p.out_dtype != p.dtype) { AttnProblem c = p; c.out_dtype = p.dtype; add(c); }
  if (strided) add(contiguous(p));
  return out;
}

// The problem shrink_problem ended at, and how many smaller candidates it tried on the way.
struct Shrunk {
  AttnProblem p;
  int steps = 0;  // accepted shrinks
  int tries = 0;  // calls of `fails`
};

// @pre fails(p). Stops after max_tries calls of `fails` (the last failing problem is returned).
inline Shrunk shrink_problem(const AttnProblem& p, const std::function<bool(const AttnProblem&)>& fails, int max_tries = 300) {
  Shrunk s{p, 0, 0};
  for (bool progress = true; progress && s.tries < max_tries;) {
    progress = false;
    for (const AttnProblem& c : smaller_problems(s.p)) {
      if (s.tries >= max_tries) break;
      ++s.tries;
      if (fails(c)) {
        s.p = c;
        ++s.steps;
        progress = true;
        break;
      }
    }
  }
  return s;
}

}  // namespace flashprobe::testing
