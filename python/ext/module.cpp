// The nanocuda._nanocuda extension: registers every binding and maps C++ errors once.
#include <nanobind/nanobind.h>

#include "bindings.h"

namespace nb = nanobind;

NB_MODULE(_nanocuda, m) {
  m.doc() = "nanocuda's compiled core; use the nanocuda package, not this module.";
  nanocuda::py::register_errors(m);
  nanocuda::py::bind_device(m);
  nanocuda::py::bind_stream(m);
  nanocuda::py::bind_event(m);
  nanocuda::py::bind_buffer(m);
  nanocuda::py::bind_memory_resource(m);
  nanocuda::py::bind_ipc(m);
  nanocuda::py::bind_info(m);
  nanocuda::py::bind_tensor_map(m);
  nanocuda::py::bind_compile(m);
  nanocuda::py::bind_launch(m);  // after Kernel and TensorMap: adds Kernel.bind
  nanocuda::py::bind_graph(m);
  nanocuda::py::bind_torch_bridge(m);
}
