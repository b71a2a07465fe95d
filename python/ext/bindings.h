// One registration function per binding file; module.cpp calls them in order.
#pragma once

#include <nanobind/nanobind.h>

namespace nanocuda::py {

void register_errors(nanobind::module_& m);
// For raw CPython entry points (the launch fast paths): call inside a catch block; sets
// the Python error for the exception in flight, mapped exactly as nanobind's translator.
void set_error_from_current_exception() noexcept;
void bind_launch(nanobind::module_& m);
void bind_graph(nanobind::module_& m);
void bind_device(nanobind::module_& m);
void bind_stream(nanobind::module_& m);
void bind_event(nanobind::module_& m);
void bind_buffer(nanobind::module_& m);
void bind_memory_resource(nanobind::module_& m);  // after Device and Buffer
void bind_ipc(nanobind::module_& m);  // after bind_memory_resource and Event
void bind_info(nanobind::module_& m);
void bind_tensor_map(nanobind::module_& m);
void bind_compile(nanobind::module_& m);
void bind_torch_bridge(nanobind::module_& m);

}  // namespace nanocuda::py
