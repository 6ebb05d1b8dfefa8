// flashprobe._core.Domain / Case / draw_*: the case generator of proptests/cases.h. The Python
// package's Hypothesis strategies drive draw_problem and draw_inputs with their own choices (each
// choice an integer range, as cases.h defines them); generate_case is the plain seeded driver.
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <functional>

#include "arrays.h"
#include "flashprobe/core/error.h"
#include "flashprobe/proptests/cases.h"

namespace flashprobe::python {

namespace {

using proptests::Case;
using proptests::Domain;

// Choices from Python callables (a Hypothesis draw behind each: Hypothesis has no size, so a range
// is never scaled and a pick is a range). A value outside the asked range is an error, never clamped.
class PyChoices final : public proptests::Choices {
 public:
  PyChoices(std::function<std::int64_t(int, int)> in_range, std::function<std::uint64_t()> any_u64, int size)
      : in_range_(std::move(in_range)), any_u64_(std::move(any_u64)), size_(size) {}
  int in_range(int lo, int hi) override {
    const std::int64_t v = in_range_(lo, hi);
    if (v < lo || v >= hi)
      throw UsageError("a choice in [" + std::to_string(lo) + ", " + std::to_string(hi) + ") came back as " +
                       std::to_string(v));
    return static_cast<int>(v);
  }
  int pick(int n) override { return in_range(0, n); }
  std::uint64_t any_u64() override {
    if (!any_u64_) throw UsageError("this draw takes no seed");
    return any_u64_();
  }
  int size() override { return size_; }

 private:
  std::function<std::int64_t(int, int)> in_range_;
  std::function<std::uint64_t()> any_u64_;
  int size_;
};

std::vector<std::string> dtype_names(const std::vector<DType>& v) {
  std::vector<std::string> out;
  for (DType t : v) out.emplace_back(dtype_name(t));
  return out;
}

std::vector<DType> parse_dtypes(const std::vector<std::string>& names) {
  std::vector<DType> out;
  for (const auto& n : names) {
    const auto t = parse_dtype(n);
    if (!t) throw UsageError("dtype '" + n + "' is not one of f16, bf16, f32");
    out.push_back(*t);
  }
  return out;
}

// The fields a Python caller may set, by name (problems(**constraints) checks names against it).
#define FP_DOMAIN_FIELDS(X)                                                                                       \
  X(head_dims) X(any_head_dim) X(dv_differs) X(tile_m) X(tile_n) X(max_sq) X(max_sk) X(max_batch) X(max_hq)      \
  X(causal) X(top_left) X(windows) X(softcap) X(alibi) X(window_odds) X(edge_windows) X(seqlens) X(strides)    \
  X(kv_offset) X(sk_zero)

Case make_case(const AttnProblem& p, std::uint64_t seed, const std::string& kind) {
  Case c;
  c.problem = p;
  c.seed = seed;
  const auto k = proptests::parse_input_kind(kind);
  if (!k) {
    std::string allowed;
    for (auto x : proptests::all_input_kinds()) allowed += (allowed.empty() ? "" : ", ") + std::string(input_kind_name(x));
    throw UsageError("input kind '" + kind + "' is not one of " + allowed);
  }
  c.inputs = *k;
  return c;
}

}  // namespace

void bind_cases(nb::module_& m) {
  auto dom = nb::class_<Domain>(m, "Domain").def(nb::init<>());
#define FP_BIND_FIELD(f) dom.def_rw(#f, &Domain::f);
  FP_DOMAIN_FIELDS(FP_BIND_FIELD)
#undef FP_BIND_FIELD
  dom.def_prop_rw(
      "dtypes", [](const Domain& d) { return dtype_names(d.dtypes); },
      [](Domain& d, const std::vector<std::string>& names) { d.dtypes = parse_dtypes(names); });
  dom.def_prop_rw(
      "supports", [](const Domain& d) { return static_cast<bool>(d.supports); },
      [](Domain& d, nb::object f) {
        if (f.is_none()) d.supports = nullptr;
        else d.supports = [f](const AttnProblem& p) { return nb::cast<bool>(f(p)); };
      },
      nb::arg("predicate").none(), "A predicate on _core.Problem (None: every valid problem).");
  m.attr("DOMAIN_FIELDS") = [] {
    std::vector<std::string> names{"dtypes"};
#define FP_NAME(f) names.emplace_back(#f);
    FP_DOMAIN_FIELDS(FP_NAME)
#undef FP_NAME
    return names;
  }();

  nb::class_<Case>(m, "Case")
      .def(nb::new_(&make_case), nb::arg("problem"), nb::arg("seed"), nb::arg("inputs"))
      .def_static("read",
                  [](nb::handle src) {
                    nlohmann::json j;
                    if (PyUnicode_Check(src.ptr())) {
                      try {
                        j = nlohmann::json::parse(nb::cast<std::string>(src));
                      } catch (const nlohmann::json::exception& e) {
                        throw UsageError(std::string("the case is not valid JSON: ") + e.what());
                      }
                    } else {
                      j = to_json_value(src, "case");
                    }
                    Case c = j.get<Case>();
                    require_valid(c.problem);
                    return c;
                  })
      .def_ro("problem", &Case::problem)
      .def_ro("seed", &Case::seed)
      .def_prop_ro("inputs", [](const Case& c) { return std::string(input_kind_name(c.inputs)); })
      .def("id", &Case::id)
      .def("to_json", [](const Case& c) { return nlohmann::json(c).dump(); })
      .def("make_inputs",
           [](const Case& c) {
             AttnInputs in = c.make_inputs();
             const AttnProblem& p = c.problem;
             return std::make_tuple(tensor_to_numpy(std::move(in.q), q_spec(p)), tensor_to_numpy(std::move(in.k), k_spec(p)),
                                    tensor_to_numpy(std::move(in.v), v_spec(p)));
           },
           "Q, K, V, each as (flat numpy buffer, dims, strides in elements) in the problem's layout.")
      .def("__eq__", [](const Case& a, const Case& b) { return a == b; });

  m.def("input_kinds", [] {
    std::vector<std::string> out;
    for (auto k : proptests::all_input_kinds()) out.emplace_back(input_kind_name(k));
    return out;
  });
  m.def(
      "draw_problem",
      [](const Domain& d, std::function<std::int64_t(int, int)> in_range, int size) {
        PyChoices c(std::move(in_range), nullptr, size);
        return proptests::draw_problem(d, c);
      },
      nb::arg("domain"), nb::arg("in_range"), nb::arg("size"));
  m.def(
      "draw_inputs",
      [](const AttnProblem& p, std::function<std::int64_t(int, int)> in_range, std::function<std::uint64_t()> any_u64) {
        PyChoices ch(std::move(in_range), std::move(any_u64), 100);
        Case c;
        c.problem = p;
        proptests::draw_inputs(c, ch);
        return c;
      },
      nb::arg("problem"), nb::arg("in_range"), nb::arg("any_u64"));
  m.def("accepts", [](const Domain& d, const AttnProblem& p) { return proptests::accepts(d, p); });
  m.def("generate_case", &proptests::generate_case, nb::arg("domain"), nb::arg("seed"), nb::arg("size") = 100);
}

}  // namespace flashprobe::python
