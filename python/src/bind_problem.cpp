// flashprobe._core.Problem: AttnProblem read from keyword arguments or JSON by the C++ reader
// (core/src/problem_json.cpp), so its field names, types and messages are the CLI's.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "arrays.h"
#include "bind.h"
#include "flashprobe/core/error.h"

namespace flashprobe::python {

AttnProblem problem_from(nb::handle text_or_dict) {
  nlohmann::json j;
  if (PyUnicode_Check(text_or_dict.ptr()) || PyBytes_Check(text_or_dict.ptr())) {
    const std::string text = nb::cast<std::string>(nb::str(text_or_dict));
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(std::string("the problem is not valid JSON: ") + e.what());
    }
  } else if (PyDict_Check(text_or_dict.ptr())) {
    j = to_json_value(text_or_dict, "");
  } else {
    throw UsageError("a problem is read from a JSON text or a dict, not from " +
                     nb::cast<std::string>(nb::repr(text_or_dict.type())));
  }
  AttnProblem p;
  from_json(j, p);
  require_valid(p);
  return p;
}

void bind_problem(nb::module_& m) {
  nb::class_<AttnProblem>(m, "Problem")
      .def_static("read", [](nb::handle src) { return problem_from(src); },
                  "A validated problem from a JSON text or a dict of AttnProblem fields.")
      .def("to_json", [](const AttnProblem& p) { return nlohmann::json(p).dump(); })
      .def("id", &AttnProblem::id)
      .def("issues",
           [](const AttnProblem& p) {
             std::vector<std::tuple<std::string, std::string, std::string>> out;
             for (const auto& i : validate(p))
               out.emplace_back(i.severity == ProblemIssue::Severity::error ? "error" : "warning", i.field, i.message);
             return out;
           },
           "Every issue of validate(): (severity, field, message).")
      .def("empty_rows",
           [](const AttnProblem& p) {
             long long n = 0;
             for (int b = 0; b < p.batch; ++b)
               for (int i = 0; i < p.sq; ++i) {
                 std::int64_t lo, hi;
                 p.visible_range(b, i, lo, hi);
                 n += lo > hi;
               }
             return n;
           },
           "Query rows (over every batch element) that see no key.")
      .def("visible_range",
           [](const AttnProblem& p, int b, int i) {
             std::int64_t lo, hi;
             p.visible_range(b, i, lo, hi);
             return std::make_tuple(lo, hi);
           })
      .def("tensor_layouts",
           [](const AttnProblem& p) {
             return std::make_tuple(layout_name(p.q, p.sq, p.hq, p.d), layout_name(p.k, p.sk, p.hkv, p.d),
                                    layout_name(p.v, p.sk, p.hkv, p.dv), layout_name(p.o, p.sq, p.hq, p.dv));
           })
      .def("diag_offset", &AttnProblem::diag_offset)
      .def("effective_scale", &AttnProblem::effective_scale)
      .def("spans", [](const AttnProblem& p) { return std::make_tuple(p.q_span(), p.k_span(), p.v_span(), p.o_span()); })
      .def("__eq__", [](const AttnProblem& a, const AttnProblem& b) { return a == b; })
      .def("__hash__", [](const AttnProblem& p) { return nb::hash(nb::str(nlohmann::json(p).dump().c_str())); });
}

}  // namespace flashprobe::python
