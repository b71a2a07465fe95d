// Installing raw METH_FASTCALL methods on bound types (fastcall.h).
#include "fastpath/fastcall.h"

namespace nb = nanobind;

namespace nanocuda::py {

void install_method(nb::handle type, PyMethodDef* def, bool static_method) {
  nb::object fn;
  if (static_method) {
    nb::object raw = nb::steal(PyCFunction_NewEx(def, nullptr, nullptr));
    if (raw.is_valid()) fn = nb::steal(PyStaticMethod_New(raw.ptr()));
  } else {
    fn = nb::steal(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type.ptr()), def));
  }
  if (!fn.is_valid() || PyObject_SetAttrString(type.ptr(), def->ml_name, fn.ptr()) != 0)
    throw nb::python_error();
}

void install_classmethod(nb::handle type, PyMethodDef* def) {
  nb::object raw = nb::steal(PyCFunction_NewEx(def, nullptr, nullptr));
  nb::object fn = raw.is_valid() ? nb::steal(PyClassMethod_New(raw.ptr())) : nb::object();
  if (!fn.is_valid() || PyObject_SetAttrString(type.ptr(), def->ml_name, fn.ptr()) != 0)
    throw nb::python_error();
}

void add_function(nb::handle module, PyMethodDef* def) {
  nb::object fn = nb::steal(PyCFunction_NewEx(def, nullptr, module.attr("__name__").ptr()));
  if (!fn.is_valid()) throw nb::python_error();
  module.attr(def->ml_name) = fn;
}

}  // namespace nanocuda::py
