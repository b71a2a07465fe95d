// The compile bindings' shared pieces: registration of each file and Python-to-option conversion.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "nanocuda/compile/named_options.h"
#include "nanocuda/core/device.h"

namespace nanocuda::py {

void bind_kernel(nanobind::module_& m);   // KernelAttributes, KernelOccupancy, Kernel
void bind_program(nanobind::module_& m);  // ProgramOptions, ObjectCode, Program, LinkerOptions, Linker

// None -> device 0, else the object's __index__ (an int or a Device).
Device to_device(const nanobind::handle& device);
// os.fspath(path) as a std::string.
std::string fspath(const nanobind::handle& path);
// A Python option value: bool, int (or anything with __index__), str, os.PathLike, bytes,
// or a list/tuple of those. `owner` and `option` name the call in the TypeError for others.
OptionValue to_option_value(const char* owner, const std::string& option, const nanobind::handle& value);

}  // namespace nanocuda::py
