// The compile bindings' shared pieces: registration of each file and Python-to-option conversion.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "nanocuda/compile/named_options.h"
#include "nanocuda/compile/program_options.h"
#include "nanocuda/core/device.h"

namespace nanocuda::py {

void bind_kernel(nanobind::module_& m);   // KernelAttributes, KernelOccupancy, Kernel
void bind_program(nanobind::module_& m);  // ProgramOptions, ObjectCode, Program, LinkerOptions, Linker

// None -> Device() (the current device, else 0), else the object's __index__ (an int or a Device).
Device to_device(const nanobind::handle& device, const char* call = "Kernel");
// os.fspath(path) as a std::string.
std::string fspath(const nanobind::handle& path);
// One folder or flag (str or os.PathLike) or an iterable of them: a str is never split.
std::vector<std::string> words(const nanobind::handle& v);
// name_expressions (one str or a list of them); `call` names the caller in the TypeError.
std::vector<std::string> name_expressions_of(const nanobind::handle& v, const char* call);
// A str argument, or a TypeError "call: param must be expected, got int 5".
std::string text_arg(const nanobind::handle& v, const char* call, const char* param, const char* expected);
// Sets one ProgramOptions keyword (nanocuda's or cuda.core's name) from a Python value;
// a wrong type is a TypeError naming the option and what it takes.
void set_program_option(ProgramOptions& o, const std::string& key, const nanobind::handle& value);
// Program's options argument: None or a ProgramOptions (anything else: TypeError).
ProgramOptions program_options_from(const nanobind::handle& options);
// ProgramOptions.__getattr__: a cuda.core option by name (None when unset).
nanobind::object program_option(const ProgramOptions& o, const std::string& key);
// A Python option value: bool, int (or anything with __index__), str, os.PathLike, bytes,
// or a list/tuple of those. `owner` and `option` name the call in the TypeError for others.
OptionValue to_option_value(const char* owner, const std::string& option, const nanobind::handle& value);

}  // namespace nanocuda::py
