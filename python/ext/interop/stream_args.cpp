// to_stream's __cuda_stream__ call: a protocol that refuses is reported naming the call.
#include <nanobind/nanobind.h>

#include <string>

#include "interop/interop.h"

namespace nb = nanobind;

namespace nanocuda::py {

nb::object call_cuda_stream(nb::handle obj, const std::string& call) {
  try {
    return obj.attr("__cuda_stream__")();
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_ValueError)) throw;
    throw nb::value_error((call + ": " + nb::str(e.value()).c_str()).c_str());
  }
}

}  // namespace nanocuda::py
