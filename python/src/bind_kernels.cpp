// flashprobe._core.kernel_*: this build's attention kernels (kernels/registry.h) run through the host
// runner (kernels/runner.h: guarded buffers, poisoned outputs, inputs checked unchanged). A CPU-only
// build lists them and raises NoDevice when asked to run one.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "arrays.h"
#include "flashprobe/core/device_info.h"
#include "flashprobe/core/error.h"
#include "flashprobe/kernels/registry.h"
#include "flashprobe/kernels/runner.h"

namespace flashprobe::python {

namespace {

const kernels::KernelInfo& kernel_named(const std::string& name) {
  const kernels::KernelInfo* k = kernels::find_kernel(name);
  if (!k) throw UsageError("unknown kernel '" + name + "' (this build has: " + kernels::kernel_names() + ")");
  return *k;
}

}  // namespace

void bind_kernels(nb::module_& m) {
  m.def("kernel_list", [] {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const auto& k : kernels::kernels()) out.emplace_back(k.name, k.description);
    return out;
  });
  m.def("kernel_supports", [](const std::string& name, const AttnProblem& p) {
    const kernels::KernelInfo& k = kernel_named(name);
    const kernels::Support s = k.supports(require_device(), p);
    return std::make_tuple(s.ok, s.reason);
  });
  m.def(
      "kernel_run",
      [](const std::string& name, const AttnProblem& p, const Array& q, const Array& k, const Array& v,
         const std::vector<std::string>& bf16_views) {
        const kernels::KernelInfo& kernel = kernel_named(name);
        const auto bf16 = [&](const char* n) { return std::find(bf16_views.begin(), bf16_views.end(), n) != bf16_views.end(); };
        const AttnInputs in{read_tensor(q, q_spec(p), bf16("Q")), read_tensor(k, k_spec(p), bf16("K")),
                            read_tensor(v, v_spec(p), bf16("V"))};
        kernels::RunResult r;
        {
          nb::gil_scoped_release unlocked;
          r = kernels::run_kernel(kernel, p, in);
        }
        std::vector<double> lse(r.out.lse.begin(), r.out.lse.end());
        return std::make_tuple(tensor_to_numpy(std::move(r.out.o), o_spec(p)),
                               doubles_to_numpy(std::move(lse), {static_cast<std::size_t>(p.batch),
                                                                 static_cast<std::size_t>(p.hq),
                                                                 static_cast<std::size_t>(p.sq)}),
                               r.clean(), r.describe());
      },
      nb::arg("name"), nb::arg("problem"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("bf16_views"));
}

}  // namespace flashprobe::python
