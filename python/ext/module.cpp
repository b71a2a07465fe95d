// The nanocuda._nanocuda extension: registers every binding and maps C++ errors once.
#include <nanobind/nanobind.h>

#include <cstdlib>

#include "bindings.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

nb::module_ submodule(nb::module_& m, const char* name, const char* doc) {
  if (nb::hasattr(m, name)) return nb::borrow<nb::module_>(m.attr(name));
  return m.def_submodule(name, doc);
}

}  // namespace

nb::module_ testing_module(nb::module_& m) {
  return submodule(m, "_testing",
                   "Test and benchmark hooks (native baseline loops, raw driver calls, "
                   "introspection); not API, may change without notice.");
}

nb::module_ bench_module(nb::module_& m) {
  return submodule(m, "_bench",
                   "Native baseline loops `nanocuda bench` compares against (straight driver "
                   "calls); not API.");
}

nb::module_ internal_module(nb::module_& m) {
  return submodule(m, "_internal",
                   "What the nanocuda package itself calls (at import, for `nanocuda info`); "
                   "not API.");
}

}  // namespace nanocuda::py

NB_MODULE(_nanocuda, m) {
  m.doc() = "nanocuda's compiled core; use the nanocuda package, not this module.";
  // nanobind lists the instances still alive when the interpreter exits. In user programs that
  // is normal (options or resources kept in module globals, cycles the last GC left), and the
  // list read like a nanocuda bug; it is a tool for binding work: NANOCUDA_LEAK_WARNINGS=1
  // shows it (the test suite sets it).
  nb::set_leak_warnings(std::getenv("NANOCUDA_LEAK_WARNINGS") != nullptr);
  nanocuda::py::register_errors(m);
  nanocuda::py::bind_device(m);
  nanocuda::py::bind_stream(m);
  nanocuda::py::bind_event(m);
  nanocuda::py::bind_green_context(m);
  nanocuda::py::bind_buffer(m);
  nanocuda::py::bind_array_view(m);
  nanocuda::py::bind_smv_exchange(m);
  nanocuda::py::bind_smv_fast(m);
  nanocuda::py::bind_memory_resource(m);
  nanocuda::py::bind_ipc(m);
  nanocuda::py::bind_managed_ops(m);
  nanocuda::py::bind_info(m);
  nanocuda::py::bind_texture(m);  // after Buffer and Stream
  nanocuda::py::bind_checkpoint(m);
  nanocuda::py::bind_nvml(m);
  nanocuda::py::bind_tensor_map(m);
  nanocuda::py::bind_compile(m);
  nanocuda::py::bind_launch(m);  // after Kernel and TensorMap: adds Kernel.bind
  nanocuda::py::bind_graph(m);
  nanocuda::py::bind_graph_memory_resource(m);  // after MemoryResource and GraphBuilder
  nanocuda::py::bind_torch_bridge(m);
  nanocuda::py::bind_protocols(m);
  // _bench and _testing: after everything their loops and hooks take as arguments.
  nanocuda::py::bind_launch_loops(m);
  nanocuda::py::bind_graph_loops(m);
#ifdef NANOCUDA_TEST_HOOKS  // source builds; scripts/build-wheel leaves the hooks out
  nanocuda::py::bind_interop_hooks(m);
  nanocuda::py::bind_tma_hooks(m);
  nanocuda::py::bind_launch_hooks(m);
  nanocuda::py::bind_nvml_hooks(m);
#endif
}
