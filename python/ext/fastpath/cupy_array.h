// Reading CuPy arrays' device pointer without importing CuPy or building their
// __cuda_array_interface__ dict: ndarray.data (a MemoryPointer) .ptr and .device_id.
#pragma once

#include <Python.h>

#include <cstdint>

namespace nanocuda::py::cupy {

// Whether `type` is a CuPy ndarray type (cupy._core.core._ndarray_base in its MRO) whose
// `data.ptr` matches what `obj`'s __cuda_array_interface__ says. Cold: callers cache the
// answer per type, and any mismatch or error leaves the type on the interface path.
bool is_array(PyObject* obj, std::uint64_t interface_ptr);

// obj.data.ptr and obj.data.device_id; raises (nb::python_error) when CuPy does.
std::uint64_t pointer(PyObject* obj, int* device);

}  // namespace nanocuda::py::cupy
