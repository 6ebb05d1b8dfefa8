// flashprobe._core: the C++ core, oracle and case generator of this repository for Python. The
// package's Python modules (python/flashprobe/) wrap it; nothing here reimplements the C++ side.
#include "bind.h"
#include "flashprobe/core/build_info.h"
#include "flashprobe/core/error.h"

NB_MODULE(_core, m) {
  namespace nb = nanobind;
  // Bad input or usage: the C++ message, as a ValueError.
  nb::exception<flashprobe::UsageError>(m, "UsageError", PyExc_ValueError);
  // A GPU is needed and this build or machine has none.
  nb::exception<flashprobe::NoDevice>(m, "NoDevice", PyExc_RuntimeError);
  // Strategies and domains held by module globals (a test module's @given) live until the interpreter
  // exits, after nanobind's own leak check: not leaks.
  nb::set_leak_warnings(false);
  m.attr("version") = flashprobe::version();
  m.attr("commit") = flashprobe::commit();
  m.attr("backend") = flashprobe::backend();
  flashprobe::python::bind_problem(m);
  flashprobe::python::bind_oracle(m);
  flashprobe::python::bind_cases(m);
  flashprobe::python::bind_kernels(m);
}
