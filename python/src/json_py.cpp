#include <nanobind/stl/string.h>

#include <string>

#include "bind.h"
#include "flashprobe/core/error.h"

namespace flashprobe::python {

nlohmann::json to_json_value(nb::handle v, const std::string& where) {
  PyObject* o = v.ptr();
  if (o == Py_None) return nullptr;
  if (PyBool_Check(o)) return o == Py_True;
  if (nb::hasattr(v, "dtype") && nb::hasattr(v, "item") && !nb::hasattr(v, "__len__"))
    return to_json_value(v.attr("item")(), where);  // a numpy scalar: its Python value
  const bool sequence = PyList_Check(o) || PyTuple_Check(o) || (nb::hasattr(v, "tolist") && nb::hasattr(v, "__len__"));
  if (!sequence && (PyLong_Check(o) || (PyIndex_Check(o) && !PyFloat_Check(o)))) {
    nb::object i = nb::steal(PyNumber_Index(o));
    if (!i.is_valid()) throw nb::python_error();
    int overflow = 0;
    const long long s = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (!overflow) return s;
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
      if (!PyErr_Occurred()) return u;
      PyErr_Clear();
    }
    // Beyond 64 bits: a JSON reader sees such a literal as a float; so do we.
    return PyLong_AsDouble(i.ptr());
  }
  if (PyFloat_Check(o)) return PyFloat_AsDouble(o);
  if (PyUnicode_Check(o)) return nb::cast<std::string>(v);
  if (PyDict_Check(o)) {
    nlohmann::json j = nlohmann::json::object();
    for (auto [k, item] : nb::borrow<nb::dict>(v)) {
      if (!PyUnicode_Check(k.ptr())) throw UsageError(where + ": keys must be strings, got " + nb::cast<std::string>(nb::repr(k)));
      const std::string key = nb::cast<std::string>(k);
      j[key] = to_json_value(item, where.empty() ? key : where + "." + key);
    }
    return j;
  }
  if (sequence) {
    nb::object seq = PyList_Check(o) || PyTuple_Check(o) ? nb::borrow(v) : v.attr("tolist")();
    nlohmann::json j = nlohmann::json::array();
    for (nb::handle item : seq) j.push_back(to_json_value(item, where));
    return j;
  }
  if (PyNumber_Check(o) && nb::hasattr(v, "__float__")) return nb::cast<double>(v.attr("__float__")());
  throw UsageError(where + " = " + nb::cast<std::string>(nb::repr(v)) +
                   " is not a JSON value (use numbers, strings, booleans, lists)");
}

nb::object to_python(const nlohmann::json& j) {
  // The text through Python's reader: plain dicts, lists, ints and floats, as a JSON file gives them.
  return nb::module_::import_("json").attr("loads")(j.dump());
}

}  // namespace flashprobe::python
