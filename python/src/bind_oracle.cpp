// flashprobe._core.check / check_backward / reference: the oracle (oracle/check.h, oracle/grad_check.h,
// oracle/reference.h) on arrays.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>

#include "arrays.h"
#include "flashprobe/core/error.h"
#include "flashprobe/core/record.h"
#include "flashprobe/oracle/check.h"
#include "flashprobe/oracle/grad_check.h"
#include "flashprobe/oracle/reference.h"

namespace flashprobe::python {

namespace {

bool has(const std::vector<std::string>& names, const char* n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

AttnInputs read_inputs(const AttnProblem& p, const Array& q, const Array& k, const Array& v,
                       const std::vector<std::string>& bf16_views) {
  return {read_tensor(q, q_spec(p), has(bf16_views, "Q")), read_tensor(k, k_spec(p), has(bf16_views, "K")),
          read_tensor(v, v_spec(p), has(bf16_views, "V"))};
}

// Reference rows as numpy: O [B, R, Hq, Dv] (or [B, Hq, R, Dv] when O's layout is BHSD), LSE [B, Hq, R].
std::tuple<nb::object, nb::object> reference_arrays(const AttnProblem& p, oracle::Reference r) {
  const auto B = static_cast<std::size_t>(p.batch), R = static_cast<std::size_t>(r.num_rows(p)),
             H = static_cast<std::size_t>(p.hq), Dv = static_cast<std::size_t>(p.dv);
  nb::object o = doubles_to_numpy(std::move(r.o), {B, R, H, Dv});
  if (o_spec(p).bhsd) o = o.attr("transpose")(0, 2, 1, 3);
  return {o, doubles_to_numpy(std::move(r.lse), {B, H, R})};
}

// A gradient or dO: the spec of the tensor it is shaped like, under its own name.
TensorSpec renamed(TensorSpec s, const char* name) {
  s.name = name;
  return s;
}

nb::object grad_margin(const oracle::GradVerdict& v) { return v.checked ? nb::cast(v.margin) : nb::none(); }

}  // namespace

void bind_oracle(nb::module_& m) {
  nb::class_<oracle::CheckResult>(m, "CheckResult")
      .def_ro("passed", &oracle::CheckResult::pass)
      .def_ro("case_id", &oracle::CheckResult::case_id)
      .def_ro("reason", &oracle::CheckResult::reason)
      .def_ro("margin", &oracle::CheckResult::o_margin)
      .def_ro("bound", &oracle::CheckResult::o_bound)
      .def_ro("atol", &oracle::CheckResult::o_atol)
      .def_ro("lse_checked", &oracle::CheckResult::lse_checked)
      .def_ro("lse_margin", &oracle::CheckResult::lse_margin)
      .def_ro("lse_bound", &oracle::CheckResult::lse_bound)
      .def_ro("rows_checked", &oracle::CheckResult::rows_checked)
      .def_ro("rows_total", &oracle::CheckResult::rows_total)
      .def("summary", &oracle::CheckResult::summary)
      .def("record",
           [](const oracle::CheckResult& r) {
             nlohmann::json rec = record_header("check");
             rec.update(r.to_json());
             return to_python(rec);
           },
           "The check record, as `flashprobe check --json` writes it.");

  m.def(
      "check",
      [](const AttnProblem& p, const Array& q, const Array& k, const Array& v, const Array& o,
         std::optional<Array> lse, int rows, std::uint64_t seed, const std::vector<std::string>& bf16_views,
         bool allow_nan_inputs) {
        require_valid(p);
        if (rows < 0) throw UsageError("rows=" + std::to_string(rows) + " is not allowed: use 0 (every row) or a count");
        const AttnInputs in = read_inputs(p, q, k, v, bf16_views);
        AttnOutputs out{read_tensor(o, o_spec(p), has(bf16_views, "O")), {}};
        if (lse) out.lse = read_lse(*lse, p);
        oracle::CheckOptions opt;
        opt.max_rows = rows;
        opt.seed = seed;
        opt.allow_nan_inputs = allow_nan_inputs;
        nb::gil_scoped_release unlocked;  // the oracle runs on every core; Python threads may go on
        return oracle::check(p, in, out, opt);
      },
      nb::arg("problem"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("o"), nb::arg("lse").none(),
      nb::arg("rows"), nb::arg("seed"), nb::arg("bf16_views"), nb::arg("allow_nan_inputs"));

  nb::class_<oracle::BackwardCheckResult>(m, "BackwardCheckResult")
      .def_ro("passed", &oracle::BackwardCheckResult::pass)
      .def_ro("failed", &oracle::BackwardCheckResult::failed)
      .def_ro("bounded", &oracle::BackwardCheckResult::bounded)
      .def_ro("case_id", &oracle::BackwardCheckResult::case_id)
      .def_ro("reason", &oracle::BackwardCheckResult::reason)
      .def_prop_ro("dq_margin", [](const oracle::BackwardCheckResult& r) { return grad_margin(r.dq); })
      .def_prop_ro("dk_margin", [](const oracle::BackwardCheckResult& r) { return grad_margin(r.dk); })
      .def_prop_ro("dv_margin", [](const oracle::BackwardCheckResult& r) { return grad_margin(r.dv); })
      .def("summary", &oracle::BackwardCheckResult::summary)
      .def("record",
           [](const oracle::BackwardCheckResult& r) {
             // As `flashprobe check --do ... --json` writes it without --o: the verdict under "backward".
             nlohmann::json rec = record_header("check");
             rec["backward"] = r.to_json();
             rec["case_id"] = r.case_id;
             rec["problem"] = r.problem;
             return to_python(rec);
           },
           "The check record, as `flashprobe check --do --dq --dk --dv --json` writes it.");

  m.def(
      "check_backward",
      [](const AttnProblem& p, const Array& q, const Array& k, const Array& v, const Array& dout,
         std::optional<Array> dq, std::optional<Array> dk, std::optional<Array> dv, std::optional<Array> o,
         std::optional<Array> lse, const std::vector<std::string>& bf16_views) {
        require_valid(p);
        if (!dq && !dk && !dv) throw UsageError("check_backward needs at least one of dq, dk, dv (the gradients to check)");
        const AttnInputs in = read_inputs(p, q, k, v, bf16_views);
        oracle::BackwardInputs bw;
        bw.dout = read_tensor(dout, renamed(o_spec(p), "dO"), has(bf16_views, "dO"));
        if (o) bw.o = read_tensor(*o, o_spec(p), has(bf16_views, "O"));
        if (lse) bw.lse = read_lse(*lse, p);
        oracle::KernelGradients g;
        if (dq) g.dq = read_tensor(*dq, renamed(q_spec(p), "dQ"), has(bf16_views, "dQ"));
        if (dk) g.dk = read_tensor(*dk, renamed(k_spec(p), "dK"), has(bf16_views, "dK"));
        if (dv) g.dv = read_tensor(*dv, renamed(v_spec(p), "dV"), has(bf16_views, "dV"));
        nb::gil_scoped_release unlocked;
        return oracle::check_backward(p, in, bw, g);
      },
      nb::arg("problem"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("dout"), nb::arg("dq").none(),
      nb::arg("dk").none(), nb::arg("dv").none(), nb::arg("o").none(), nb::arg("lse").none(), nb::arg("bf16_views"));

  m.def(
      "reference",
      [](const AttnProblem& p, const Array& q, const Array& k, const Array& v, std::optional<std::vector<int>> rows,
         const std::vector<std::string>& bf16_views) {
        require_valid(p);
        const AttnInputs in = read_inputs(p, q, k, v, bf16_views);
        if (rows && rows->empty()) throw UsageError("rows=[] names no query row: pass None for every row");
        if (rows)
          for (int r : *rows)
            if (r < 0 || r >= p.sq)
              throw UsageError("row " + std::to_string(r) + " is not a query row: rows must be in [0, sq=" +
                               std::to_string(p.sq) + ")");
        oracle::Reference r;
        {
          nb::gil_scoped_release unlocked;
          r = rows ? oracle::reference_rows(p, in, *rows) : oracle::reference(p, in);
        }
        return reference_arrays(p, std::move(r));
      },
      nb::arg("problem"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("rows").none(), nb::arg("bf16_views"));
}

}  // namespace flashprobe::python
