// The one place C++ exceptions become Python ones (classes defined in nanocuda/_errors.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <exception>
#include <functional>
#include <stdexcept>
#include <typeinfo>

#include "bindings.h"
#include "fastpath/call_names.h"
#include "fastpath/fastcall.h"
#include "nanocuda/compile/compile_error.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/nvml/nvml_error.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// Borrowed for the life of the process from nanocuda._errors.
PyObject* g_cuda_error = nullptr;
PyObject* g_driver_not_found = nullptr;
PyObject* g_driver_too_old = nullptr;
PyObject* g_compile_error = nullptr;
PyObject* g_cooperative_too_large = nullptr;
PyObject* g_toolkit_not_found = nullptr;
PyObject* g_state_error = nullptr;

// ProgramOptions::resolved_arch's error in Python words: one option per entry point.
constexpr const char* kNoArchMessage =
    "no GPU to take the target architecture from (no NVIDIA driver): pass arch=\"sm_90a\" "
    "(or your GPU's sm_XY) to nanocuda.compile() or nanocuda.load(), ProgramOptions(arch=...) "
    "to Program, or --arch to `nanocuda compile`";

// `message` replaces the C++ text; `more` sets the attributes a subclass adds (DriverTooOldError's versions).
void raise_cuda_error(PyObject* cls, const Error& e, const char* message = nullptr,
                      const std::function<void(nb::object&)>& more = {}) {
  const std::string text = message ? std::string(message) : python_words(e.what());
  nb::object exc = nb::steal(PyObject_CallFunction(cls, "s", text.c_str()));
  if (!exc.is_valid()) return;  // the call's own exception is set
  exc.attr("code") = static_cast<int>(e.code());
  exc.attr("name") = e.name();
  exc.attr("description") = e.description();
  exc.attr("call") = python_words(e.call());
  exc.attr("object") = python_words(e.object());
  if (more) more(exc);
  PyErr_SetObject(cls, exc.ptr());
}

void raise_compile_error(PyObject* cls, const CompileError& e) {
  nb::object exc = nb::steal(PyObject_CallFunction(cls, "s", e.what()));
  if (!exc.is_valid()) return;
  exc.attr("log") = e.log();
  nb::list options;
  for (const auto& o : e.options()) options.append(nb::str(o.c_str()));
  exc.attr("options") = options;
  exc.attr("first_error") = e.first_error();
  PyErr_SetObject(cls, exc.ptr());
}

// The one map from nanocuda's C++ exceptions to Python's, used by nanobind's translator and
// by the raw entry points alike; false (nothing set) for any other exception.
bool set_nanocuda_error(const std::exception_ptr& p) noexcept {
  try {
    std::rethrow_exception(p);
  } catch (const DriverNotFoundError& e) {
    if (e.call() == "ProgramOptions::arch") {  // compiling with no GPU and no arch: name the option
      raise_cuda_error(g_driver_not_found, e, kNoArchMessage);
      return true;
    }
    raise_cuda_error(g_driver_not_found, e);
  } catch (const DriverTooOldError& e) {
    raise_cuda_error(g_driver_too_old, e, nullptr, [&](nb::object& exc) {
      exc.attr("feature") = python_words(e.feature());
      exc.attr("driver_version") = e.driver_version();
      exc.attr("required_version") = e.required_version();
    });
  } catch (const Error& e) {
    raise_cuda_error(e.code() == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE ? g_cooperative_too_large : g_cuda_error, e);
  } catch (const CompileError& e) {
    if (e.from_linker()) {  // CompileError, or the bridged class when cuda.bindings' nvjitlink is loaded
      try {
        nb::object cls = nb::module_::import_("nanocuda._errors").attr("_link_error_class")();
        raise_compile_error(cls.ptr(), e);
      } catch (nb::python_error& pe) {
        pe.restore();
      }
    } else {
      raise_compile_error(g_compile_error, e);
    }
  } catch (const ToolkitNotFoundError& e) {
    PyErr_SetString(g_toolkit_not_found, e.what());
  } catch (const NvmlError& e) {
    // One class per nvmlReturn_t, defined in Python (nanocuda.system.exceptions); imported
    // here, at raise time, since that package imports this extension.
    try {
      nb::object make = nb::module_::import_("nanocuda.system.exceptions").attr("_from_code");
      nb::object exc = make(static_cast<int>(e.code()), e.what(), e.name(), e.call(), e.object());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    } catch (nb::python_error& pe) {
      pe.restore();
    }
  } catch (const nanocuda::StateError& e) {
    PyErr_SetString(g_state_error, python_words(e.what()).c_str());
  } catch (const nanocuda::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, python_words(e.what()).c_str());
  } catch (const nanocuda::TypeError& e) {
    PyErr_SetString(PyExc_TypeError, python_words(e.what()).c_str());
  } catch (const std::bad_cast&) {
    // nanobind's nb::cast of a value of the wrong type; each argument converter names its own
    // call and rule, so reaching this is a converter to fix, but never a RuntimeError.
    PyErr_SetString(PyExc_TypeError, "nanocuda: an argument has a type this call cannot convert "
                                     "(see the call's signature in help())");
  } catch (const std::runtime_error& e) {
    // The core's plain RuntimeErrors name C++ calls too; subclasses keep nanobind's map.
    if (typeid(e) != typeid(std::runtime_error)) return false;
    PyErr_SetString(PyExc_RuntimeError, python_words(e.what()).c_str());
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace

void set_error_from_current_exception() noexcept {
  std::exception_ptr p = std::current_exception();
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
    return;
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
    return;
  } catch (const nb::builtin_exception& e) {
    PyObject* type = e.type() == nb::exception_type::type_error    ? PyExc_TypeError
                     : e.type() == nb::exception_type::value_error ? PyExc_ValueError
                     : e.type() == nb::exception_type::buffer_error ? PyExc_BufferError
                     : e.type() == nb::exception_type::index_error ? PyExc_IndexError
                     : e.type() == nb::exception_type::key_error   ? PyExc_KeyError
                     : e.type() == nb::exception_type::attribute_error ? PyExc_AttributeError
                                                                   : PyExc_RuntimeError;
    PyErr_SetString(type, e.what());
    return;
  } catch (...) {
  }
  if (set_nanocuda_error(p)) return;
  try {
    throw;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, python_words(e.what()).c_str());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void register_errors(nb::module_& m) {
  nb::module_ errors = nb::module_::import_("nanocuda._errors");
  g_cuda_error = errors.attr("CudaError").inc_ref().ptr();
  g_driver_not_found = errors.attr("DriverNotFoundError").inc_ref().ptr();
  g_driver_too_old = errors.attr("DriverTooOldError").inc_ref().ptr();
  g_compile_error = errors.attr("CompileError").inc_ref().ptr();
  g_cooperative_too_large = errors.attr("CooperativeLaunchTooLargeError").inc_ref().ptr();
  g_toolkit_not_found = errors.attr("ToolkitNotFoundError").inc_ref().ptr();
  g_state_error = errors.attr("StateError").inc_ref().ptr();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    if (!set_nanocuda_error(p)) std::rethrow_exception(p);  // nanobind's own map next
  });
  (void)m;
}

}  // namespace nanocuda::py
