// The trampoline that lets Python classes implement nanocuda::MemoryResource, and the
// helpers the memory bindings share.
#pragma once

#include <array>

#include <nanobind/nanobind.h>
#include <nanobind/trampoline.h>

#include <cstdint>
#include <string>

#include "core/py_buffer.h"
#include "nanocuda/core/memory_resource.h"
#include "nanocuda/core/stream.h"

namespace nanocuda::py {

// Python subclasses override allocate(size, stream) -> Buffer (usually
// Buffer.from_handle(ptr, size, mr=self)) and deallocate(ptr, size, stream). When C++ asks
// a Python resource for memory, the Buffer its allocate returns gives its pointer up.
struct PyMemoryResource : MemoryResource {
  NB_TRAMPOLINE(MemoryResource);
  CUdeviceptr allocate(std::size_t size, StreamRef stream) override;
  void deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) override;
  bool is_device_accessible() const override;
  bool is_host_accessible() const override;
  int device_id() const override;
  bool is_managed() const override;
  std::string describe() const override;
  // A Python deallocate() that raised while a Buffer was freed by the garbage collector goes
  // to sys.unraisablehook, as an exception in __del__ does (not into the next test's call).
  bool report_failed_free(const std::exception& e, CUdeviceptr ptr, std::size_t size) noexcept override;
};

// TypeError/ValueError unless a Python resource's allocate() gave an open Buffer of at least
// `size` bytes or an int address (the boundary check of every call nanocuda makes to one).
void check_allocation(nanobind::handle resource, nanobind::handle result, std::size_t size);
// The MemoryResource `obj` (TypeError naming `call` and `what` otherwise); a Python subclass
// whose __init__ skipped MemoryResource.__init__ (cuda.core needs none) is initialized here.
std::shared_ptr<MemoryResource> resource_arg(nanobind::handle obj, const char* call, const char* what);
// A new Python Buffer owning `buffer` (uint8, 1-D).
nanobind::object wrap_buffer(Buffer buffer);
// The stream for an allocation: `stream`, else the legacy stream of `ordinal` (or of Device()).
// Device.allocate's body (the device's resource; a Python resource gets a Python call).
nanobind::object allocate_on_device(const Device& d, nanobind::handle size, nanobind::handle stream);
StreamRef stream_for(nanobind::handle stream, int ordinal, const char* call);

// An IPC pool's uuid as Python's uuid.UUID (cuda.core's type), None for the all-zero "none"
// (bind_ipc.cpp).
nanobind::object uuid_object(const std::array<unsigned char, 16>& id);
// MemoryResource.allocate for Python subclasses (nanobind's dispatch finds their override).
nanobind::object py_allocate(nanobind::handle self, nanobind::handle size, nanobind::handle stream);
// Installs the METH_FASTCALL allocate/close methods and the Buffer free list (bind_buffer_fast.cpp),
// once Buffer, Device and the resources are bound.
void install_buffer_fast_paths();

// The attributes every pool-backed resource shares, bound once per resource class.
template <class R, class C>
void bind_pool_members(C& cls, const char* name) {
  cls.def_prop_ro("attributes", &R::attributes, "The pool's counters and reuse policy (MemoryPoolAttributes).")
      .def_prop_ro("handle", [](const R& r) { return reinterpret_cast<uintptr_t>(r.handle()); },
                   "The CUmemoryPool as an int (ValueError without a pool).")
      .def_prop_ro("is_handle_owned", &R::is_pool, "True for a pool this resource created (and closes).")
      .def_prop_ro("is_closed", &R::is_closed, "close() was called.")
      .def("close", &R::close,
           (std::string("Destroy the pool of this ") + name +
            " (memory still in Buffers is freed when they close); later allocations raise ValueError.").c_str());
}

}  // namespace nanocuda::py
