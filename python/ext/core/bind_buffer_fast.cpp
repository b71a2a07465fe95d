// The per-call paths of allocation and freeing: METH_FASTCALL allocate (on the C++ resources
// and Device) and Buffer.close, and the freed Buffer instances kept for reuse.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>

#include <array>
#include <memory>
#include <type_traits>
#include <typeinfo>

#include "bindings.h"
#include "core/py_memory_resource.h"
#include "core/py_size.h"
#include "interop/interop.h"
#include "fastpath/fastcall.h"
#include "fastpath/fastcall_signature.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/core/graph_memory_resource.h"
#include "nanocuda/core/managed_memory_resource.h"
#include "nanocuda/core/pinned_memory_resource.h"
#include "nanocuda/core/virtual_memory_resource.h"
#include "nanocuda/launch/graph_builder.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

PyTypeObject* g_buffer_type = nullptr;

// Freed Buffer instances kept for reuse: allocate+close made and freed one nanobind instance
// per pair (object allocation, nanobind's pointer-to-instance registration and its removal).
// Only exact nanocuda.Buffer instances are kept: untracked by the GC and their weak references
// cleared first (as nanobind's own dealloc does), then the
// C++ Buffer inside is destroyed (its memory freed) before an instance goes in, and a new one
// is constructed when it comes out, so every Buffer handed out is a fresh, independent
// object to its holder. Kept only under the GIL (free-threaded builds skip the list).
// A closed, plain Buffer (no owner, 1-D: every allocate+close pair's) is kept constructed,
// with its stream and resource dropped (Buffer::forget), so reusing it skips nanobind's
// destruct/mark-ready state changes and the PyBuffer's teardown and construction; any other
// is destructed first, as before.
#ifndef Py_GIL_DISABLED
constexpr int kFreeBuffers = 16;
struct KeptBuffer {
  PyObject* obj;
  bool constructed;  // a ready PyBuffer holding a forgotten, closed Buffer
};
KeptBuffer g_free_buffers[kFreeBuffers];
int g_free_count = 0;
bool g_free_list_open = false;
destructor g_nanobind_dealloc = nullptr;

void buffer_dealloc(PyObject* self) {
  if (g_free_list_open && Py_TYPE(self) == g_buffer_type && g_free_count < kFreeBuffers && nb::inst_ready(self)) {
    PyObject_GC_UnTrack(self);  // Buffer is weak-referenceable, hence a GC type
    auto** weaklist = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + g_buffer_type->tp_weaklistoffset);
    if (*weaklist) PyObject_ClearWeakRefs(self);  // callbacks run now, with the Buffer gone
    PyBuffer& pb = *nb::inst_ptr<PyBuffer>(self);
    bool constructed = pb.buffer.is_closed() && !pb.owner.is_valid() && pb.shape.size() == 1;
    if (constructed) pb.buffer.forget();  // the stream's and resource's last owners may run Python
    else nb::inst_destruct(self);  // frees the memory if still open (the Buffer destructor); not ready now
    if (g_free_list_open && g_free_count < kFreeBuffers) {  // the destructor may have run Python
      Py_SET_REFCNT(self, 1);
      g_free_buffers[g_free_count++] = {self, constructed};
      return;
    }
  }
  g_nanobind_dealloc(self);  // destructs a ready instance
}

// At exit the kept instances go back through nanobind (before its leak check).
void close_free_list() {
  g_free_list_open = false;
  while (g_free_count > 0) Py_DECREF(g_free_buffers[--g_free_count].obj);
}
#endif

}  // namespace

namespace {

// A kept instance, else a new one; not ready until a PyBuffer is constructed in it (if that
// throws, dropping the instance frees it without running a destructor).
nb::object buffer_instance() {
#ifndef Py_GIL_DISABLED
  if (g_free_count > 0) {
    auto [kept, constructed] = g_free_buffers[--g_free_count];
    if (constructed) nb::inst_destruct(kept);  // a forgotten Buffer: nothing to free
    PyObject_GC_Track(kept);  // untracked while kept
    return nb::steal(kept);
  }
#endif
  return nb::inst_alloc(reinterpret_cast<PyObject*>(g_buffer_type));
}

// A new Buffer from `mr`, allocated straight into the instance: no temporary Buffer to move
// (each move copied the stream's shared state) and destroy; into a kept constructed one when
// there is one (if allocating throws, the instance goes back to the list as it came).
nb::object new_buffer(std::shared_ptr<MemoryResource>&& mr, std::size_t n, StreamRef stream) {
#ifndef Py_GIL_DISABLED
  if (g_free_count > 0 && g_free_buffers[g_free_count - 1].constructed) {
    nb::object obj = nb::steal(g_free_buffers[--g_free_count].obj);
    PyBuffer& pb = *nb::inst_ptr<PyBuffer>(obj);
    pb.buffer.reallocate(std::move(mr), n, stream);
    pb.dtype = DType{};
    pb.shape.set_1d(static_cast<int64_t>(n));
    pb.external = AddressInfo{};
    PyObject_GC_Track(obj.ptr());  // untracked while kept
    return obj;
  }
#endif
  nb::object obj = buffer_instance();
  new (nb::inst_ptr<PyBuffer>(obj)) PyBuffer(std::move(mr), n, stream);
  nb::inst_mark_ready(obj);
  return obj;
}

}  // namespace

nb::object wrap_buffer(Buffer buffer) {
  auto n = static_cast<int64_t>(buffer.size());
  // Constructed in place: nb::cast's type lookup and the move of a temporary PyBuffer were a
  // third of MemoryResource.allocate (bench memory).
  nb::object obj = buffer_instance();
  new (nb::inst_ptr<PyBuffer>(obj)) PyBuffer(std::move(buffer), DType{}, Shape(n));
  nb::inst_mark_ready(obj);
  return obj;
}

StreamRef stream_for(nb::handle stream, int ordinal, const char* call) {
  if (!stream.is_none()) return to_stream(stream, call);
  return StreamRef::default_for(ordinal < 0 ? Device() : Device(ordinal));
}

namespace {

PyTypeObject* g_stream_type = nullptr;

// A plain int size is read directly (the common call); anything else, and every error, goes
// through size_arg.
std::size_t size_of_arg(PyObject* size, const char* call) {
  if (PyLong_CheckExact(size)) [[likely]] {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(size, &overflow);
    if (overflow == 0 && v >= 0) return static_cast<std::size_t>(v);
  }
  return size_arg(size, call);
}

nb::object allocate_from(std::shared_ptr<MemoryResource> mr, nb::handle size, nb::handle stream);


nb::object allocate_from(std::shared_ptr<MemoryResource> mr, nb::handle size, nb::handle stream) {
  std::size_t n = size_of_arg(size.ptr(), "MemoryResource.allocate");
  if (Py_TYPE(stream.ptr()) == g_stream_type)  // no Stream copy or conversion
    return new_buffer(std::move(mr), n, nb::inst_ptr<PyStream>(stream)->ref("MemoryResource.allocate"));
  StreamRef s = stream_for(stream, mr ? mr->device_id() : 0, "MemoryResource.allocate");
  // cuda.core's rule: a pool allocation in a GraphBuilder's capture is an error (graph memory
  // comes from GraphMemoryResource). Checked here, off the plain-Stream path, because in global
  // capture mode the driver would accept it.
  if (!stream.is_none() && nb::isinstance<GraphBuilder>(stream) && dynamic_cast<DeviceMemoryResource*>(mr.get()))
    require_not_capturing(*mr, s);
  return new_buffer(std::move(mr), n, s);
}

// The owner of a resource nanobind wrapped from a C++ shared_ptr (Device.memory_resource: its
// instance keeps that shared_ptr for life, so shared_from_this() finds it), with one atomic
// increment; weak_from_this().lock() took three (the weak_ptr copy, the lock, its release).
// Null if there is none after all (a resource wrapped by reference).
std::shared_ptr<MemoryResource> existing_owner(MemoryResource* raw) noexcept {
  try {
    return raw->shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    return nullptr;
  }
}

// allocate(size, stream=None) and Buffer.close(stream=None) are METH_FASTCALL methods:
// `bench memory` pairs them around two driver calls of a few hundred ns, and nanobind's
// generic dispatch (keyword matching, an argument vector, overload resolution) was a large
// share of what the Python path added (2.18x the C++ loop on the H100).
FastcallSignature<2> g_allocate_signature("MemoryResource.allocate", {"size", "stream"}, 2);
FastcallSignature<1> g_close_signature("Buffer.close", {"stream"}, 1);

// T: the C++ class the method is installed on (self is one, or a Python subclass of one).
template <class T>
NANOCUDA_FASTCALL_BODY PyObject* resource_allocate(PyObject* self, PyObject* const* args,
                                                  Py_ssize_t nargsf, PyObject* kwnames) {
  std::array<PyObject*, 2> a;
  g_allocate_signature.match(args, PyVectorcall_NARGS(nargsf), kwnames, a);
  if (!a[0]) g_allocate_signature.missing(0);
  auto [ready, made_in_python] = nb::inst_state(self);  // destruct: the instance owns the resource
  if (!ready) throw nb::type_error("MemoryResource.allocate: the resource is not initialized");
  auto* raw = static_cast<MemoryResource*>(nb::inst_ptr<T>(self));
  std::shared_ptr<MemoryResource> mr = made_in_python ? nullptr : existing_owner(raw);
  // The resource's existing owner when there is one (while any of its Buffers lives, for one
  // made in Python); else what nanobind's shared_ptr caster makes (an owner holding a
  // reference to self), without its type lookup.
  if (!mr) mr = raw->weak_from_this().lock();
  if (!mr) mr = nb::detail::shared_from_python(raw, self);
  nb::object out = allocate_from(std::move(mr), nb::handle(a[0]), a[1] ? nb::handle(a[1]) : nb::none());
  // cuda.core: a managed resource's buffers are ManagedBuffers (a Python subclass of Buffer).
  if constexpr (std::is_same_v<T, ManagedMemoryResource>) out = as_managed_buffer(out);
  return out.release().ptr();
}

NANOCUDA_FASTCALL_BODY PyObject* buffer_close(PyObject* self, PyObject* const* args,
                                              Py_ssize_t nargsf, PyObject* kwnames) {
  std::array<PyObject*, 1> a;
  g_close_signature.match(args, PyVectorcall_NARGS(nargsf), kwnames, a);
  if (!nb::inst_ready(self))  // a Python subclass whose __init__ did not run the base's
    throw nb::type_error("Buffer.close: the Buffer is not initialized");
  PyBuffer& pb = *nb::inst_ptr<PyBuffer>(self);
  Buffer& b = pb.buffer;
  PyObject* stream = a[0];
  if (!stream || stream == Py_None) b.close();
  else if (Py_TYPE(stream) == g_stream_type) b.close(nb::inst_ptr<PyStream>(stream)->ref("Buffer.close"));
  else b.close(to_stream(nb::handle(stream), "Buffer.close"));
  if (pb.owner.is_valid()) pb.owner = nb::object();  // cuda.core: a closed Buffer keeps no owner alive
  Py_RETURN_NONE;
}

template <class T>
PyMethodDef g_allocate_def = fastcall_method<resource_allocate<T>>(
    "allocate",
    "allocate(size, stream=None)\n--\n\n"
    "A Buffer of `size` bytes, allocated in the order of `stream` (default: the device's legacy "
    "stream). Example: ``buf = mr.allocate(1 << 20, stream=s)``.");
PyMethodDef g_close_def = fastcall_method<buffer_close>(
    "close",
    "close(stream=None)\n--\n\nFree the memory in the order of `stream` (default: the allocating stream).");

// Device.allocate: through the device's resource; a Python resource gets a Python call,
// so the Buffer its allocate() returns is the one the caller gets.
nb::object device_allocate(const Device& d, nb::handle size, nb::handle stream) {
#ifndef Py_GIL_DISABLED
  static MemoryResource::DeviceCache cache;  // used under the GIL only (no thread_local lookup)
  auto mr = MemoryResource::for_device(d, cache);
#else
  auto mr = MemoryResource::for_device(d);
#endif
  // The device's current pool (the usual answer) is known by its exact type: one pointer
  // compare instead of a dynamic_cast across the class tree (~200 instructions per call).
  if (typeid(*mr) != typeid(DeviceMemoryResource) && dynamic_cast<PyMemoryResource*>(mr.get())) {
    nb::object resource = nb::cast(mr);
    nb::object r = resource.attr("allocate")(size, nb::arg("stream") = stream);  // cuda.core's keyword-only stream
    check_allocation(resource, r, size_arg(size, "Device.allocate"));
    if (!nb::isinstance<PyBuffer>(r))  // Device.allocate returns a Buffer
      throw nb::type_error((std::string(Py_TYPE(resource.ptr())->tp_name) + ".allocate returned an int: "
                            "return Buffer.from_handle(ptr, size, mr=self)").c_str());
    return r;
  }
  std::size_t n = size_of_arg(size.ptr(), "Device.allocate");
  if (Py_TYPE(stream.ptr()) == g_stream_type)
    return new_buffer(std::move(mr), n, nb::inst_ptr<PyStream>(stream)->ref("Device.allocate"));
  StreamRef s = stream_for(stream, d.ordinal(), "Device.allocate");
  if (!stream.is_none() && nb::isinstance<GraphBuilder>(stream) && dynamic_cast<DeviceMemoryResource*>(mr.get()))
    require_not_capturing(*mr, s);  // as MemoryResource.allocate (allocate_from)
  return new_buffer(std::move(mr), n, s);
}

FastcallSignature<2> g_device_allocate_signature("Device.allocate", {"size", "stream"}, 2);

// Device.allocate as a METH_FASTCALL method, like MemoryResource.allocate.
NANOCUDA_FASTCALL_BODY PyObject* device_allocate_fast(PyObject* self, PyObject* const* args,
                                                      Py_ssize_t nargsf, PyObject* kwnames) {
  std::array<PyObject*, 2> a;
  g_device_allocate_signature.match(args, PyVectorcall_NARGS(nargsf), kwnames, a);
  if (!a[0]) g_device_allocate_signature.missing(0);
  if (!nb::inst_ready(self)) throw nb::type_error("Device.allocate: the Device is not initialized");
  return device_allocate(*nb::inst_ptr<Device>(self), nb::handle(a[0]), a[1] ? nb::handle(a[1]) : nb::none())
      .release()
      .ptr();
}

PyMethodDef g_device_allocate_def = fastcall_method<device_allocate_fast>(
    "allocate",
    "allocate(size, stream=None)\n--\n\n"
    "A Buffer of `size` bytes from Device.memory_resource, in the order of `stream`. Example: "
    "``buf = nanocuda.Device(0).allocate(1 << 20)``.");

}  // namespace

nb::object py_allocate(nb::handle self, nb::handle size, nb::handle stream) {
  return allocate_from(resource_arg(self, "MemoryResource.allocate", "self"), size, stream);
}

nb::object allocate_on_device(const Device& d, nb::handle size, nb::handle stream) {
  return device_allocate(d, size, stream);
}

void install_buffer_fast_paths() {
  // Only on the C++ resources: a Python subclass of MemoryResource keeps the nanobind
  // method, whose trampoline finds its own allocate.
  install_method(nb::type<Device>(), &g_device_allocate_def);
  g_stream_type = reinterpret_cast<PyTypeObject*>(nb::type<PyStream>().ptr());
  g_buffer_type = reinterpret_cast<PyTypeObject*>(nb::type<PyBuffer>().ptr());
  install_method(nb::type<DeviceMemoryResource>(), &g_allocate_def<DeviceMemoryResource>);
  install_method(nb::type<PinnedMemoryResource>(), &g_allocate_def<PinnedMemoryResource>);
  install_method(nb::type<ManagedMemoryResource>(), &g_allocate_def<ManagedMemoryResource>);
  install_method(nb::type<VirtualMemoryResource>(), &g_allocate_def<VirtualMemoryResource>);
  // Buffer.close (bound in bind_buffer.cpp) is replaced by the same-signature raw method.
  install_method(nb::type<PyBuffer>(), &g_close_def);
#ifndef Py_GIL_DISABLED
  // Weak references and the GC tracking they bring are handled in buffer_dealloc; a __dict__ is not.
  if (g_buffer_type->tp_weaklistoffset > 0 && g_buffer_type->tp_dictoffset == 0 &&
      PyType_HasFeature(g_buffer_type, Py_TPFLAGS_HAVE_GC)) {
    g_nanobind_dealloc = g_buffer_type->tp_dealloc;
    g_buffer_type->tp_dealloc = buffer_dealloc;
    g_free_list_open = true;
    nb::module_::import_("atexit").attr("register")(nb::cpp_function(&close_free_list));
  }
#endif
}

}  // namespace nanocuda::py
