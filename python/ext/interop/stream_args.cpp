// to_stream's checks that name the call: a closed nanocuda Stream, a stream protocol that refuses.
#include <nanobind/nanobind.h>

#include <string>

#include "core/py_stream.h"
#include "interop/interop.h"
#include "nanocuda/driver/error.h"

namespace nb = nanobind;

namespace nanocuda::py {

StreamRef open_stream_ref(nb::handle stream, const char* where) {
  const auto& s = nb::cast<const PyStream&>(stream);
  // An owned Stream's view would refuse it only where it is used, naming StreamRef::handle.
  if (s.is_closed()) [[unlikely]]
    throw ValueError(where, "the stream is closed (" + s.unchecked().describe() + ")");
  return s.ref(where);
}

nb::object call_cuda_stream(nb::handle obj, const std::string& call) {
  try {
    return obj.attr("__cuda_stream__")();
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_ValueError)) throw;
    throw nb::value_error((call + ": " + nb::str(e.value()).c_str()).c_str());
  }
}

}  // namespace nanocuda::py
