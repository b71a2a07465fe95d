// GraphDefinition's kernel-node add path, shared by _internal.GraphDef.add_kernel and the fast launch().
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>

#include "nanocuda/compile/kernel.h"
#include "nanocuda/launch/graph_definition.h"
#include "nanocuda/launch/launch_config.h"

namespace nanocuda::py {

// A reference to `obj` owned by C++ state. Dropped directly when this thread holds the GIL
// (also during interpreter shutdown, when Py_IsInitialized() is already false), else with it.
std::shared_ptr<void> hold_py(nanobind::handle obj);

// Adds a kernel node after `deps`: `args` packed against `kernel`'s layout (checked as a launch
// does; the driver copies the bytes), and the graph keeps `py_kernel` (the Kernel's Python object,
// so its library) alive, once per graph however many nodes run it. Returns the node's handle.
std::uintptr_t add_kernel_node(GraphDefinition& g, const GraphDefinition::Deps& deps,
                               const LaunchConfig& config, const Kernel& kernel, PyObject* py_kernel,
                               nanobind::tuple args);

// _internal.install_definition_launch(GraphDefinition, KernelNode, _Tree): a METH_FASTCALL
// GraphDefinition.launch for the usual call, the Python one (_launch_entry) for the rest.
void bind_graph_definition_launch(nanobind::module_& m);

}  // namespace nanocuda::py
