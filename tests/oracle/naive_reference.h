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

NaiveResult naive_attention(const AttnProblem& p, const AttnInputs& in);

}  // namespace flashprobe::test
