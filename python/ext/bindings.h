// One registration function per binding file; module.cpp calls them in order.
#pragma once

#include <nanobind/nanobind.h>

namespace nanocuda::py {

void register_errors(nanobind::module_& m);
void bind_device(nanobind::module_& m);
void bind_stream(nanobind::module_& m);
void bind_event(nanobind::module_& m);
void bind_buffer(nanobind::module_& m);
void bind_info(nanobind::module_& m);
void bind_compile(nanobind::module_& m);

}  // namespace nanocuda::py
