#pragma once
// Reading problems from files: every field the problem JSON reader (from_json in problem.h) takes,
// in order, with the values it allows (the reader's list of known fields and `flashprobe check
// --help` are this table), and a problem file read and validated with the file named in each error.
#include <span>
#include <string>
#include <string_view>

#include "flashprobe/core/problem.h"

namespace flashprobe {

struct ProblemField {
  std::string_view name, allowed;
};
std::span<const ProblemField> problem_fields();

// from_json of the file, then require_valid; every UsageError starts with the path.
AttnProblem read_problem_file(const std::string& path);

}  // namespace flashprobe
