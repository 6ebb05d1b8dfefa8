#pragma once
// An independent attention reference: plain loops in long double, written from docs/attention-semantics.md's
// semantics without sharing any code with oracle/src (not even AttnProblem::visible_range), so the
// two implementations can check each other.
#include <vector>

#include "flashprobe/core/problem.h"
#include "flashprobe/core/tensor.h"

namespace flashprobe::test {

struct NaiveResult {
  std::vector<long double> o;    // [B, Sq, Hq, Dv]
  std::vector<long double> lse;  // [B, Hq, Sq]
};

// The stored input elements as long doubles, at the same offsets as the tensors (finite differences
// perturb these far below the stored type's resolution).
struct NaiveInputs {
  std::vector<long double> q, k, v;
};
NaiveInputs to_long_double(const AttnInputs& in);

NaiveResult naive_attention(const AttnProblem& p, const AttnInputs& in);
NaiveResult naive_attention(const AttnProblem& p, const NaiveInputs& in);

}  // namespace flashprobe::test
