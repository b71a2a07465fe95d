// Python bindings for sharing memory and events between processes, Buffer's resource-side
// methods, and peer access between devices.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bindings.h"
#include "core/py_memory_resource.h"
#include "core/py_device.h"
#include "core/py_size.h"
#include "interop/dtype.h"
#include "interop/interop.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/core/ipc_event.h"
#include "nanocuda/core/peer_access.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

std::array<unsigned char, 16> uuid_of(nb::bytes b) {
  if (b.size() != 16) throw nb::value_error("IPC: a pool uuid is 16 bytes");
  std::array<unsigned char, 16> id{};
  std::memcpy(id.data(), b.c_str(), 16);
  return id;
}

nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

Device device_of(nb::handle device) {
  return Device(device_ordinal_arg(device, "IPC", 0));
}

}  // namespace

void bind_ipc(nb::module_& m) {
  nb::class_<IpcBufferDescriptor>(
      m, "IPCBufferDescriptor",
      "What another process needs to map one Buffer of an IPC-enabled pool: plain bytes "
      "(to_bytes/from_bytes, picklable), no file descriptor.")
      .def_prop_ro("size", [](const IpcBufferDescriptor& d) { return d.size; }, "The buffer's size in bytes.")
      .def_prop_ro("pool_uuid", [](const IpcBufferDescriptor& d) {
                     return nb::bytes(reinterpret_cast<const char*>(d.pool_uuid.data()), 16);
                   }, "The uuid of the exporting pool.")
      .def("to_bytes", [](const IpcBufferDescriptor& d) { return as_bytes(d.to_bytes()); }, "The descriptor as bytes.")
      .def_static("from_bytes", [](nb::bytes b) { return IpcBufferDescriptor::from_bytes({b.c_str(), b.size()}); },
                  nb::arg("data"), "Parse bytes from to_bytes(); ValueError for anything else.")
      ;  // pickled by nanocuda._ipc (copyreg), which can name a Python rebuild function

  nb::class_<IpcAllocationHandle>(
      m, "IPCAllocationHandle",
      "An exported pool: an owned POSIX file descriptor (send it with multiprocessing, which "
      "duplicates it into the receiver) and the pool's uuid.")
      .def_prop_ro("fd", &IpcAllocationHandle::fd, "The file descriptor (owned; closed by close()).")
      .def_prop_ro("uuid", [](const IpcAllocationHandle& h) {
                     return nb::bytes(reinterpret_cast<const char*>(h.uuid().data()), 16);
                   }, "The pool's uuid.")
      .def_prop_ro("is_closed", &IpcAllocationHandle::is_closed, "close() was called.")
      .def("close", &IpcAllocationHandle::close, "Close the file descriptor.")
      .def_static("_adopt", [](int fd, nb::bytes uuid) { return IpcAllocationHandle(fd, uuid_of(uuid)); },
                  nb::arg("fd"), nb::arg("uuid"));

  nb::handle dmr = nb::type<DeviceMemoryResource>();
  dmr.attr("get_allocation_handle") = nb::cpp_function(
      [](DeviceMemoryResource& r) -> const IpcAllocationHandle& { return r.allocation_handle(); },
      nb::is_method(), nb::name("get_allocation_handle"), nb::scope(dmr), nb::rv_policy::reference_internal,
      "The pool exported as an IPCAllocationHandle (made once, owned by the resource).");
  // cuda.core's spelling: the same handle as a property.
  dmr.attr("allocation_handle") = nb::module_::import_("builtins").attr("property")(
      nb::cpp_function([](DeviceMemoryResource& r) -> const IpcAllocationHandle& { return r.allocation_handle(); },
                       nb::is_method(), nb::rv_policy::reference_internal),
      nb::none(), nb::none(), "The pool exported as an IPCAllocationHandle (cuda.core; get_allocation_handle()).");
  dmr.attr("from_allocation_handle") = nb::module_::import_("builtins").attr("staticmethod")(nb::cpp_function(
      [](nb::handle device, const IpcAllocationHandle& h) {
        return DeviceMemoryResource::from_allocation_handle(device_of(device), h);
      },
      nb::name("from_allocation_handle"), nb::scope(dmr), nb::arg("device_id").none(), nb::arg("handle"),
      "Map a pool exported by another process (a mapped resource: it imports buffers, it does not "
      "allocate). The handle's descriptor is only read."));

  nb::handle buffer = nb::type<PyBuffer>();
  nb::object staticmethod = nb::module_::import_("builtins").attr("staticmethod");
  nb::object property = nb::module_::import_("builtins").attr("property");
  buffer.attr("memory_resource") = property(nb::cpp_function([](const PyBuffer& b) -> nb::object {
    if (b.buffer.is_closed()) return nb::none();  // cuda.core: a closed Buffer has no resource
    if (b.buffer.memory_resource()) return nb::cast(b.buffer.memory_resource());
    if (!b.buffer.is_owning()) return nb::none();
    return nb::cast(std::make_shared<DeviceMemoryResource>(b.buffer.device()));
  }), nb::none(), nb::none(), "The MemoryResource that frees this buffer (None for a view from from_handle, or once closed).");
  // One export for both spellings (get_ipc_descriptor(), cuda.core 1.2's ipc_descriptor property).
  auto export_buffer = [](const PyBuffer& b, const char* call) {
    auto mr = std::dynamic_pointer_cast<DeviceMemoryResource>(b.buffer.memory_resource());
    if (!mr)
      throw nb::value_error((std::string(call) + ": " + b.buffer.describe() +
                             " is not from a DeviceMemoryResource(ipc_enabled=True)").c_str());
    return mr->export_buffer(b.buffer);
  };
  buffer.attr("ipc_descriptor") = property(
      nb::cpp_function([export_buffer](const PyBuffer& b) { return export_buffer(b, "Buffer.ipc_descriptor"); },
                       nb::is_method()),
      nb::none(), nb::none(),
      "cuda.core's name: this buffer exported for another process (an IPCBufferDescriptor; get_ipc_descriptor()).");
  buffer.attr("get_ipc_descriptor") = nb::cpp_function(
      [export_buffer](const PyBuffer& b) { return export_buffer(b, "Buffer.get_ipc_descriptor"); },
      nb::is_method(), nb::name("get_ipc_descriptor"), nb::scope(buffer),
      "Export this buffer (from an IPC-enabled pool) for another process: an IPCBufferDescriptor.");
  buffer.attr("from_ipc_descriptor") = staticmethod(nb::cpp_function(
      [](std::shared_ptr<DeviceMemoryResource> mr, const IpcBufferDescriptor& d, nb::handle stream,
         nb::handle dtype, nb::handle shape) {
        if (!mr) throw nb::value_error("Buffer.from_ipc_descriptor: mr is None");
        Stream s = stream_for(stream, mr->device_id(), "Buffer.from_ipc_descriptor");
        DType dt = dtype.is_none() ? DType{} : parse_dtype(dtype);
        std::vector<int64_t> sh;
        if (shape.is_none()) sh.push_back(static_cast<int64_t>(d.size / dt.itemsize()));
        else for (nb::handle x : shape) sh.push_back(nb::cast<int64_t>(x));
        std::size_t need = dt.itemsize();
        for (int64_t x : sh) need *= static_cast<std::size_t>(x < 0 ? 0 : x);
        if (need > d.size) throw nb::value_error("Buffer.from_ipc_descriptor: shape needs more bytes than the buffer has");
        return nb::cast(PyBuffer(DeviceMemoryResource::import_buffer(mr, d, s), dt, std::move(sh)), nb::rv_policy::move);
      },
      nb::name("from_ipc_descriptor"), nb::scope(buffer), nb::arg("mr"), nb::arg("descriptor"),
      nb::arg("stream") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("shape") = nb::none(),
      "Map a buffer another process exported, through the pool mapped with "
      "DeviceMemoryResource.from_allocation_handle; closing it unmaps it here only. The exporter "
      "must keep its Buffer open until this one is closed: a buffer it already freed still maps, "
      "with no error (the driver cannot tell), over whatever its pool holds now."));

  nb::handle event = nb::type<Event>();
  event.attr("create_ipc") = staticmethod(nb::cpp_function(
      [](nb::handle device) { return create_ipc_event(device_of(device)); }, nb::name("create_ipc"),
      nb::scope(event), nb::arg("device") = nb::none(),
      "A new interprocess event (timing disabled), which other processes can open."));
  event.attr("is_ipc_enabled") = property(nb::cpp_function([](const Event& e) { return e.is_interprocess(); }),
                                          nb::none(), nb::none(), "The event can be shared with other processes.");
  event.attr("get_ipc_descriptor") = nb::cpp_function(
      [](const Event& e) { return as_bytes(export_ipc_event(e)); }, nb::is_method(), nb::name("get_ipc_descriptor"),
      nb::scope(event), "The event's 64-byte interprocess handle.");
  // cuda.core 1.2 reads it as a property; from_ipc_descriptor takes the same bytes.
  event.attr("ipc_descriptor") = property(
      nb::cpp_function([](const Event& e) { return as_bytes(export_ipc_event(e)); }), nb::none(), nb::none(),
      "cuda.core's name: the event's 64-byte interprocess handle (for Event.from_ipc_descriptor).");
  event.attr("from_ipc_descriptor") = staticmethod(nb::cpp_function(
      [](nb::bytes handle, nb::handle device) {
        return import_ipc_event(device_of(device), {handle.c_str(), handle.size()});
      },
      nb::name("from_ipc_descriptor"), nb::scope(event), nb::arg("handle"), nb::arg("device") = nb::none(),
      "Open an event another process exported with get_ipc_descriptor()."));

  nb::handle device = nb::type<Device>();
  device.attr("can_access_peer") = nb::cpp_function(
      [](const Device& d, nb::handle peer) { return can_access_peer(d, device_of(peer)); }, nb::is_method(),
      nb::name("can_access_peer"), nb::scope(device), nb::arg("peer").none(),
      "Whether this device's kernels can use `peer`'s memory directly (False for itself).");
  device.attr("enable_peer_access") = nb::cpp_function(
      [](const Device& d, nb::handle peer) { enable_peer_access(d, device_of(peer)); }, nb::is_method(),
      nb::name("enable_peer_access"), nb::scope(device), nb::arg("peer").none(),
      "Let this device's kernels use memory allocated on `peer` (idempotent; ValueError when the "
      "hardware cannot).");
  device.attr("disable_peer_access") = nb::cpp_function(
      [](const Device& d, nb::handle peer) { disable_peer_access(d, device_of(peer)); }, nb::is_method(),
      nb::name("disable_peer_access"), nb::scope(device), nb::arg("peer").none(), "Undo enable_peer_access (idempotent).");
}

}  // namespace nanocuda::py
