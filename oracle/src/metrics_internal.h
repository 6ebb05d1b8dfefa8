#pragma once
// compare() with the reference's O already rounded to the output type (check.cpp's judge rounds it
// once for both of its comparisons and its bounds).
#include <vector>

#include "flashprobe/oracle/check.h"

namespace flashprobe::oracle {

// round_to(p.out_dtype, ref.o[i]) for every i.
std::vector<double> rounded_reference(const AttnProblem& p, const Reference& ref);
Metrics compare_rounded(const AttnProblem& p, const Reference& ref, const std::vector<double>& rounded,
                        const Reference& x);

}  // namespace flashprobe::oracle
