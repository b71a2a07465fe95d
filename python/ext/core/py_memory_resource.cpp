// The Python subclass trampoline of MemoryResource: calls into Python's allocate/deallocate
// and reads its accessibility properties, with the checks nanocuda applies to what comes back.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "bindings.h"
#include "core/py_memory_resource.h"
#include "core/py_device.h"
#include "core/py_size.h"
#include "interop/interop.h"

namespace nb = nanobind;

namespace nanocuda::py {
CUdeviceptr PyMemoryResource::allocate(std::size_t size, StreamRef stream) {
  nb::gil_scoped_acquire gil;
  constexpr uint64_t hash = nb::detail::str_hash("allocate");
  nb::detail::ticket ticket(nb_trampoline, "allocate", hash, false);
  if (!ticket.key.is_valid())  // MemoryResource itself, or a subclass without allocate
    throw nb::type_error((std::string(Py_TYPE(nb_trampoline.base().ptr())->tp_name) +
                          ".allocate: a MemoryResource subclass must define allocate(size, *, stream)").c_str());
  // stream by keyword: cuda.core's interface declares it keyword-only (allocate(size, *, stream)).
  nb::object r = nb_trampoline.base().attr(ticket.key)(size, nb::arg("stream") = stream_object(stream));
  check_allocation(nb_trampoline.base(), r, size);
  if (nb::isinstance<PyBuffer>(r)) {
    auto& b = nb::cast<PyBuffer&>(r);
    // The caller (C++) now owns the memory; the Python Buffer must not free it too.
    return b.buffer.release();
  }
  return size_arg(r, "MemoryResource.allocate (Python subclass)", "the returned address");
}

// What a Python resource's allocate() returned, checked where nanocuda takes it: an open
// Buffer of at least `size` bytes, or an int address (whose size cannot be checked).
void check_allocation(nb::handle resource, nb::handle result, std::size_t size) {
  std::string who = std::string(Py_TYPE(resource.ptr())->tp_name) + ".allocate";
  if (nb::isinstance<PyBuffer>(result)) {
    const Buffer& b = nb::cast<PyBuffer&>(result).buffer;
    if (b.is_closed()) throw nb::value_error((who + " returned a closed Buffer").c_str());
    if (b.size() < size)
      throw nb::value_error((who + " returned a Buffer of " + std::to_string(b.size()) + " bytes for a request of " +
                             std::to_string(size) + " bytes (it must be at least as large)").c_str());
    return;
  }
  if (PyLong_Check(result.ptr()) && !PyBool_Check(result.ptr())) return;
  throw nb::type_error((who + " must return a nanocuda.Buffer (Buffer.from_handle(ptr, size, mr=self)) or an int "
                        "address, got " + Py_TYPE(result.ptr())->tp_name).c_str());
}

void PyMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) {
  nb::gil_scoped_acquire gil;
  // A Buffer may be freed while an exception is in flight (a temporary dropped as an error
  // propagates): keep that exception aside while Python's deallocate runs.
  nb::error_scope in_flight;
  constexpr uint64_t hash = nb::detail::str_hash("deallocate");
  nb::detail::ticket ticket(nb_trampoline, "deallocate", hash, true);
  // As allocate: stream by keyword (cuda.core's deallocate(self, ptr, size, *, stream=None)).
  nb_trampoline.base().attr(ticket.key)(ptr, size, nb::arg("stream") = stream_object(stream));
}

bool PyMemoryResource::report_failed_free(const std::exception& e, CUdeviceptr ptr, std::size_t size) noexcept {
  auto* error = dynamic_cast<const nb::python_error*>(&e);
  if (!error) return false;
  nb::gil_scoped_acquire gil;
  nb::error_scope in_flight;  // an exception propagating while the Buffer was dropped stays
  char where[256];  // no allocation: nothing here may throw
  std::snprintf(where, sizeof where, "%s.deallocate(0x%llx, %zu) while a Buffer was freed",
                Py_TYPE(nb_trampoline.base().ptr())->tp_name, static_cast<unsigned long long>(ptr), size);
  // Consumes the error (caught by reference: the Buffer's destructor's catch owns the object).
  const_cast<nb::python_error*>(error)->discard_as_unraisable(where);
  return true;
}

// The three queries are properties in Python (cuda.core's interface): read the subclass's
// attribute, calling it if it is a method, and refuse a subclass that did not define it
// (the base property would call back here forever).
// The values are converted with errors naming the subclass and the attribute: a bool (or an
// int, numpy bool) for the two flags; for device_id an ordinal, a Device (cuda.core's own
// subclasses return either) or -1 for host memory.
template <class T>
T read_override(nb::handle self, const char* name) {
  nb::object own = nb::getattr(self.type(), name, nb::none());
  std::string who = std::string(Py_TYPE(self.ptr())->tp_name) + "." + name;
  if (own.is_none() || own.is(nb::getattr(nb::type<MemoryResource>(), name)))
    throw nb::type_error((std::string(Py_TYPE(self.ptr())->tp_name) + ": a MemoryResource subclass must define " +
                          name).c_str());
  nb::object v = nb::getattr(self, name);
  if (PyCallable_Check(v.ptr())) v = v();
  if constexpr (std::is_same_v<T, bool>) {
    if (PyBool_Check(v.ptr()) || (PyIndex_Check(v.ptr()) && !PyUnicode_Check(v.ptr())) ||
        std::strcmp(Py_TYPE(v.ptr())->tp_name, "numpy.bool") == 0 ||
        std::strcmp(Py_TYPE(v.ptr())->tp_name, "numpy.bool_") == 0) {
      int truth = PyObject_IsTrue(v.ptr());
      if (truth < 0) throw nb::python_error();
      return truth != 0;
    }
    throw nb::type_error((who + " must be a bool, got " + Py_TYPE(v.ptr())->tp_name).c_str());
  } else {
    if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()) && PyLong_AsLong(v.ptr()) == -1 && !PyErr_Occurred())
      return -1;
    return device_ordinal_arg(v, who.c_str(), -1);
  }
}

bool PyMemoryResource::is_device_accessible() const {
  nb::gil_scoped_acquire gil;
  return read_override<bool>(nb_trampoline.base(), "is_device_accessible");
}
bool PyMemoryResource::is_host_accessible() const {
  nb::gil_scoped_acquire gil;
  return read_override<bool>(nb_trampoline.base(), "is_host_accessible");
}
int PyMemoryResource::device_id() const {
  nb::gil_scoped_acquire gil;
  try {
    return read_override<int>(nb_trampoline.base(), "device_id");
  } catch (nb::python_error& e) {
    // cuda.core's rule for host memory: device_id raises RuntimeError ("not bound to any GPU").
    if (e.matches(PyExc_RuntimeError) && !e.matches(PyExc_NotImplementedError)) return -1;
    throw;
  }
}
std::string PyMemoryResource::describe() const {
  nb::gil_scoped_acquire gil;
  // The class name (not repr(): the base __repr__ calls describe()).
  return std::string(Py_TYPE(nb_trampoline.base().ptr())->tp_name) + " (Python MemoryResource)";
}

bool PyMemoryResource::is_managed() const {
  nb::gil_scoped_acquire gil;
  // Optional for subclasses (cuda.core's default is False).
  nb::handle self = nb_trampoline.base();
  nb::object own = nb::getattr(self.type(), "is_managed", nb::none());
  if (own.is_none() || own.is(nb::getattr(nb::type<MemoryResource>(), "is_managed"))) return false;
  return read_override<bool>(self, "is_managed");
}

std::shared_ptr<MemoryResource> resource_arg(nb::handle obj, const char* call, const char* what) {
  if (!nb::isinstance<MemoryResource>(obj))
    throw nb::type_error((std::string(call) + ": " + what + " must be a nanocuda.MemoryResource, got " +
                          Py_TYPE(obj.ptr())->tp_name).c_str());
  if (!nb::inst_ready(obj)) {
    // cuda.core's MemoryResource needs no __init__, so its subclasses often skip
    // super().__init__(): initialize the base here, as MemoryResource.__init__ would have.
    if (nb::type_info(obj.type()) != typeid(MemoryResource))
      throw nb::type_error((std::string(call) + ": " + what + " (a " + Py_TYPE(obj.ptr())->tp_name +
                            ") is not initialized; call super().__init__(...) in its __init__").c_str());
    new (nb::inst_ptr<PyMemoryResource>(obj)) PyMemoryResource();
    nb::inst_mark_ready(obj);
  }
  return nb::cast<std::shared_ptr<MemoryResource>>(obj);
}

}  // namespace nanocuda::py
