#pragma once
// Pieces of the extension module flashprobe._core, one file per topic (module.cpp ties them).
#include <nanobind/nanobind.h>
#include <nlohmann/json.hpp>

#include "flashprobe/core/problem.h"

namespace flashprobe::python {

namespace nb = nanobind;

// A Python value (dict, list, tuple, str, bool, int, float, None, and numpy scalars through
// __index__ / __float__) as JSON, so that keyword arguments reach the C++ JSON readers and their
// messages unchanged. A float stays a float (1.7 is not an integer), an int stays an exact integer.
nlohmann::json to_json_value(nb::handle value, const std::string& where);
// JSON as Python values (through the json module, so that every number keeps its type).
nb::object to_python(const nlohmann::json& j);
// A problem from a JSON text or a dict, read strictly and validated (UsageError otherwise).
AttnProblem problem_from(nb::handle text_or_dict);

void bind_problem(nb::module_& m);
void bind_oracle(nb::module_& m);
void bind_cases(nb::module_& m);
void bind_kernels(nb::module_& m);

}  // namespace flashprobe::python
