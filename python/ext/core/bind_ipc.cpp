// Python bindings for sharing memory and events between processes, Buffer's resource-side
// methods, and peer access between devices.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstring>
#include <string_view>

#include "bindings.h"
#include "core/py_memory_resource.h"
#include "core/py_device.h"
#include "core/py_size.h"
#include "interop/dtype.h"
#include "interop/interop.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/core/ipc_event.h"
#include "nanocuda/core/pinned_memory_resource.h"
#include "nanocuda/core/peer_access.h"

namespace nb = nanobind;

namespace nanocuda::py {

nb::object uuid_object(const std::array<unsigned char, 16>& id) {
  if (id == std::array<unsigned char, 16>{}) return nb::none();
  return nb::module_::import_("uuid").attr("UUID")(
      nb::arg("bytes") = nb::bytes(reinterpret_cast<const char*>(id.data()), id.size()));
}

namespace {

std::array<unsigned char, 16> uuid_of(nb::bytes b) {
  if (b.size() != 16) throw nb::value_error("IPC: a pool uuid is 16 bytes");
  std::array<unsigned char, 16> id{};
  std::memcpy(id.data(), b.c_str(), 16);
  return id;
}

nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

// uuid.UUID (cuda.core's type) or its 16 bytes; `none_ok`: None gives the zero "no uuid".
std::array<unsigned char, 16> uuid_arg(nb::handle obj, const char* call, bool none_ok = false) {
  if (obj.is_none() && none_ok) return {};
  if (nb::isinstance<nb::bytes>(obj)) return uuid_of(nb::borrow<nb::bytes>(obj));
  if (nb::hasattr(obj, "bytes") && nb::hasattr(obj, "hex")) return uuid_of(nb::bytes(obj.attr("bytes")));
  throw nb::type_error((std::string(call) + ": uuid must be a uuid.UUID" + (none_ok ? " or None" : "") +
                        ", got " + Py_TYPE(obj.ptr())->tp_name).c_str());
}

// cuda.core's wording for an argument of the wrong class (its users match on how it starts);
// the call it was passed to (Buffer.from_ipc_descriptor, the one user) comes after.
[[noreturn]] void wrong_type(const char* arg, const char* expected, nb::handle got) {
  throw nb::type_error((std::string("Argument '") + arg + "' has incorrect type (expected " + expected +
                        ", got " + Py_TYPE(got.ptr())->tp_name + ") in Buffer.from_ipc_descriptor").c_str());
}

// Ours, or cuda.core's own IPCBufferDescriptor read through its pickled form
// (rebuild, (payload bytes, size)), the one view of it cuda.core makes public.
IpcBufferDescriptor descriptor_arg(nb::handle desc) {
  if (nb::isinstance<IpcBufferDescriptor>(desc)) return nb::cast<const IpcBufferDescriptor&>(desc);
  if (std::string_view(Py_TYPE(desc.ptr())->tp_name).ends_with("IPCBufferDescriptor") &&
      nb::hasattr(desc, "__reduce__")) {
    nb::object reduced = desc.attr("__reduce__")();
    if (nb::isinstance<nb::tuple>(reduced) && nb::len(reduced) >= 2) {
      nb::object args = reduced[1];
      if (nb::isinstance<nb::tuple>(args) && nb::len(args) == 2 && nb::isinstance<nb::bytes>(args[0])) {
        auto payload = nb::borrow<nb::bytes>(args[0]);
        return IpcBufferDescriptor::from_payload({payload.c_str(), payload.size()},
                                                 size_arg(args[1], "Buffer.from_ipc_descriptor", "ipc_descriptor.size"));
      }
    }
  }
  wrong_type("ipc_descriptor", "IPCBufferDescriptor", desc);
}

Device device_of(nb::handle device, const char* call = "IPC") {
  return Device(device_ordinal_arg(device, call));
}

// One pool kind's IPC members (DeviceMemoryResource, PinnedMemoryResource): the same rules
// in the core (PoolIpc), the same Python spelling. `device_first`: cuda.core's
// DeviceMemoryResource.from_allocation_handle(device_id, alloc_handle); the pinned one takes
// the handle alone (its calls run in the current device's context, or `device`'s).
template <class R>
void bind_pool_ipc(const char* name, bool device_first) {
  nb::handle cls = nb::type<R>();
  nb::object property = nb::module_::import_("builtins").attr("property");
  nb::object staticmethod = nb::module_::import_("builtins").attr("staticmethod");
  cls.attr("get_allocation_handle") = nb::cpp_function(
      [](R& r) -> const IpcAllocationHandle& { return r.allocation_handle(); },
      nb::is_method(), nb::name("get_allocation_handle"), nb::scope(cls), nb::rv_policy::reference_internal,
      "The pool exported as an IPCAllocationHandle (made once, owned by the resource).");
  // cuda.core's spelling: the same handle as a property.
  cls.attr("allocation_handle") = property(
      nb::cpp_function([](R& r) -> const IpcAllocationHandle& { return r.allocation_handle(); },
                       nb::is_method(), nb::rv_policy::reference_internal),
      nb::none(), nb::none(), "The pool exported as an IPCAllocationHandle (cuda.core; get_allocation_handle()).");
  std::string call = std::string(name) + ".from_allocation_handle";
  auto import = [call, name](nb::handle device, nb::handle handle) {
    if (nb::isinstance<IpcAllocationHandle>(handle))
      return R::from_allocation_handle(device_of(device, "from_allocation_handle"), nb::cast<const IpcAllocationHandle&>(handle));
    if (PyLong_Check(handle.ptr()) && !PyBool_Check(handle.ptr()))
      return R::from_allocation_fd(device_of(device, "from_allocation_handle"),
                                   static_cast<int>(int_arg(handle, call.c_str(), "alloc_handle", LLONG_MIN, INT32_MAX)));
    throw nb::type_error((call + ": alloc_handle must be an IPCAllocationHandle of a " + name +
                          " or a file descriptor (int), got " + std::string(Py_TYPE(handle.ptr())->tp_name)).c_str());
  };
  const char* import_doc =
      "Map a pool exported by another process (a mapped resource: it imports buffers, it does not "
      "allocate). The handle is only read (an int file descriptor stays the caller's to close); a "
      "handle with a uuid is registered under it, and a pool already mapped here is reused.";
  if (device_first)
    cls.attr("from_allocation_handle") = staticmethod(nb::cpp_function(
        import, nb::name("from_allocation_handle"), nb::scope(cls), nb::arg("device_id").none(),
        nb::arg("alloc_handle").none(), import_doc));
  else
    cls.attr("from_allocation_handle") = staticmethod(nb::cpp_function(
        [import](nb::handle handle, nb::handle device) { return import(device, handle); },
        nb::name("from_allocation_handle"), nb::scope(cls), nb::arg("alloc_handle").none(),
        nb::arg("device") = nb::none(), import_doc));
  std::string reg_call = std::string(name) + ".register", from_call = std::string(name) + ".from_registry";
  cls.attr("register") = nb::cpp_function(
      [reg_call](std::shared_ptr<R> mr, nb::handle uuid) {
        return R::register_mapped(mr, uuid_arg(uuid, reg_call.c_str()));
      },
      nb::is_method(), nb::name("register"), nb::scope(cls), nb::arg("uuid").none(),
      "Register this mapped resource under its exporter's uuid (for from_registry and unpickled "
      "Buffers); returns the one already registered under it, if any.");
  cls.attr("from_registry") = staticmethod(nb::cpp_function(
      [from_call](nb::handle uuid) { return R::from_registry(uuid_arg(uuid, from_call.c_str())); },
      nb::name("from_registry"), nb::scope(cls), nb::arg("uuid").none(),
      "The mapped resource registered under `uuid`; RuntimeError when this process has none."));
}

// Buffer.get_ipc_descriptor / ipc_descriptor: the resource kind that made it exports it.
IpcBufferDescriptor export_any(const PyBuffer& b, const char* call) {
  const auto& mr = b.buffer.memory_resource();
  if (auto d = std::dynamic_pointer_cast<DeviceMemoryResource>(mr)) return d->export_buffer(b.buffer);
  if (auto p = std::dynamic_pointer_cast<PinnedMemoryResource>(mr)) return p->export_buffer(b.buffer);
  throw_not_ipc_enabled(call, mr ? mr->describe() : b.buffer.describe() + " (no resource)",
                        "allocate from DeviceMemoryResourceOptions(ipc_enabled=True) or "
                        "PinnedMemoryResourceOptions(ipc_enabled=True)");
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
      // cuda.core's pair: _init(payload, size) rebuilds what __reduce__ (nanocuda._ipc) gives;
      // the payload is checked where it is used (Buffer.from_ipc_descriptor), as there.
      .def_static("_init", [](nb::bytes payload, nb::handle size) {
                    return IpcBufferDescriptor::from_payload({payload.c_str(), payload.size()},
                                                             size_arg(size, "IPCBufferDescriptor._init"));
                  }, nb::arg("reserved"), nb::arg("size").none(),
                  "Rebuild a descriptor from its payload bytes and size (pickling's path).")
      .def("__reduce__", [](const IpcBufferDescriptor& d) {
             // A module-level rebuild function (nanobind's own functions do not pickle by name).
             return nb::make_tuple(nb::module_::import_("nanocuda._ipc").attr("_descriptor_from_payload"),
                                   nb::make_tuple(as_bytes(d.payload()), d.size));
           }, "(rebuild, (payload, size)): the payload is the driver's export data, then the pool's uuid.")
      .def("__eq__", [](const IpcBufferDescriptor& a, nb::handle b) {
             return nb::isinstance<IpcBufferDescriptor>(b) && a.to_bytes() == nb::cast<const IpcBufferDescriptor&>(b).to_bytes();
           })
      .def("__hash__", [](const IpcBufferDescriptor& d) { return nb::hash(as_bytes(d.to_bytes())); })
      .def("__repr__", [](const IpcBufferDescriptor& d) {
             return "<nanocuda.IPCBufferDescriptor of " + std::to_string(d.size) + " bytes>";
           });

  nb::class_<IpcAllocationHandle>(
      m, "IPCAllocationHandle",
      "An exported pool: an owned POSIX file descriptor (send it with multiprocessing, which "
      "duplicates it into the receiver) and the pool's uuid.")
      .def_prop_ro("fd", &IpcAllocationHandle::fd, "The file descriptor (owned; closed by close()).")
      .def_prop_ro("handle", [](const IpcAllocationHandle& h) { return h.is_closed() ? -1 : h.fd(); },
                   "cuda.core's name: the file descriptor, -1 once closed.")
      .def("__int__", [](const IpcAllocationHandle& h) {
             if (h.is_closed())
               throw nb::value_error("Cannot convert IPCAllocationHandle to int: the handle is closed.");
             return h.fd();
           })
      .def_prop_ro("uuid", [](const IpcAllocationHandle& h) { return uuid_object(h.uuid()); },
                   "The exporting pool's uuid (a uuid.UUID; None for a bare file descriptor).")
      .def_prop_ro("is_closed", &IpcAllocationHandle::is_closed, "close() was called.")
      .def("close", &IpcAllocationHandle::close, "Close the file descriptor (safe to call twice).")
      .def_static("_init", [](nb::handle fd, nb::handle uuid) {
                    long long n = int_arg(fd, "IPCAllocationHandle._init", "fd", LLONG_MIN, INT32_MAX);
                    if (n < 0)
                      throw nb::value_error(("Invalid allocation handle (fd) " + std::to_string(n) +
                                             ": must be non-negative").c_str());
                    return IpcAllocationHandle(static_cast<int>(n), uuid_arg(uuid, "IPCAllocationHandle._init", true));
                  }, nb::arg("handle").none(), nb::arg("uuid").none(),
                  "Adopt an owned file descriptor (pickling's path; the handle closes it).")
      .def_static("_adopt", [](int fd, nb::handle uuid) {
                    return IpcAllocationHandle(fd, uuid_arg(uuid, "IPCAllocationHandle._adopt", true));
                  }, nb::arg("fd"), nb::arg("uuid").none());

  bind_pool_ipc<DeviceMemoryResource>("DeviceMemoryResource", true);
  bind_pool_ipc<PinnedMemoryResource>("PinnedMemoryResource", false);
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
  buffer.attr("ipc_descriptor") = property(
      nb::cpp_function([](const PyBuffer& b) { return export_any(b, "Buffer.ipc_descriptor"); },
                       nb::is_method()),
      nb::none(), nb::none(),
      "cuda.core's name: this buffer exported for another process (an IPCBufferDescriptor; get_ipc_descriptor()).");
  buffer.attr("get_ipc_descriptor") = nb::cpp_function(
      [](const PyBuffer& b) { return export_any(b, "Buffer.get_ipc_descriptor"); },
      nb::is_method(), nb::name("get_ipc_descriptor"), nb::scope(buffer),
      "Export this buffer (from an IPC-enabled pool) for another process: an IPCBufferDescriptor.");
  buffer.attr("from_ipc_descriptor") = staticmethod(nb::cpp_function(
      [](nb::handle mr_obj, nb::handle desc, nb::handle stream, nb::handle dtype, nb::handle shape) {
        // Either pool kind; any other resource cannot map memory of another process.
        bool pinned = nb::isinstance<PinnedMemoryResource>(mr_obj);
        if (!pinned && !nb::isinstance<DeviceMemoryResource>(mr_obj)) {
          if (!nb::isinstance<MemoryResource>(mr_obj)) wrong_type("mr", "DeviceMemoryResource", mr_obj);
          throw_not_ipc_enabled("Buffer.from_ipc_descriptor", nb::cast<const MemoryResource&>(mr_obj).describe(),
                                "import through DeviceMemoryResource.from_allocation_handle or "
                                "PinnedMemoryResource.from_allocation_handle");
        }
        const IpcBufferDescriptor d = descriptor_arg(desc);
        int ordinal = pinned ? -1 : nb::cast<const DeviceMemoryResource&>(mr_obj).device_id();
        StreamRef s = stream_for(stream, ordinal, "Buffer.from_ipc_descriptor");
        DType dt = dtype.is_none() ? DType{} : parse_dtype(dtype);
        if (dt.itemsize() <= 0)
          throw nb::value_error("Buffer.from_ipc_descriptor: dtype must have a non-zero item size");
        std::vector<int64_t> sh;
        if (shape.is_none()) {
          sh.push_back(static_cast<int64_t>(d.size / static_cast<std::uint64_t>(dt.itemsize())));
        } else {
          for (nb::handle x : shape) {
            long long n = int_arg(x, "Buffer.from_ipc_descriptor", "shape entry", 0, INT64_MAX);
            sh.push_back(n);
          }
        }
        std::size_t need = static_cast<std::size_t>(dt.itemsize());
        for (int64_t x : sh) need *= static_cast<std::size_t>(x);
        if (need > d.size) throw nb::value_error("Buffer.from_ipc_descriptor: shape needs more bytes than the buffer has");
        Buffer imported = pinned ? PinnedMemoryResource::import_buffer(nb::cast<std::shared_ptr<PinnedMemoryResource>>(mr_obj), d, s)
                                 : DeviceMemoryResource::import_buffer(nb::cast<std::shared_ptr<DeviceMemoryResource>>(mr_obj), d, s);
        return nb::cast(PyBuffer(std::move(imported), dt, std::move(sh)), nb::rv_policy::move);
      },
      nb::name("from_ipc_descriptor"), nb::scope(buffer), nb::arg("mr").none(), nb::arg("ipc_descriptor").none(),
      nb::arg("stream") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("shape") = nb::none(),
      "Map a buffer another process exported, through the pool mapped with "
      "DeviceMemoryResource.from_allocation_handle or PinnedMemoryResource.from_allocation_handle; closing it unmaps it here only (importing one "
      "buffer twice gives the same address, unmapped at the last close). The exporter must keep its "
      "Buffer open until this one is closed: a buffer it already freed still maps, with no error "
      "(the driver cannot tell), over whatever its pool holds now."));

  nb::handle event = nb::type<Event>();
  event.attr("create_ipc") = staticmethod(nb::cpp_function(
      [](nb::handle device, bool blocking_sync) { return create_ipc_event(device_of(device, "Event.create_ipc"), blocking_sync); },
      nb::name("create_ipc"), nb::scope(event), nb::arg("device") = nb::none(), nb::kw_only(),
      nb::arg("blocking_sync") = false,
      "A new interprocess event (timing disabled, not yet recorded: record it once), which other "
      "processes can open. cuda.core's way: stream.record(options=EventOptions(ipc_enabled=True))."));
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
      [](nb::bytes handle, nb::handle device, bool blocking_sync) {
        return import_ipc_event(device_of(device, "Event.from_ipc_descriptor"), {handle.c_str(), handle.size()}, blocking_sync);
      },
      nb::name("from_ipc_descriptor"), nb::scope(event), nb::arg("handle"), nb::arg("device") = nb::none(),
      nb::kw_only(), nb::arg("blocking_sync") = false,
      "Open an event another process exported with get_ipc_descriptor() (blocking_sync: the "
      "exporter's flag, reported by is_blocking_sync; the handle does not carry it)."));

  nb::handle device = nb::type<Device>();
  device.attr("can_access_peer") = nb::cpp_function(
      [](const Device& d, nb::handle peer) { return can_access_peer(d, device_of(peer, "Device.can_access_peer")); }, nb::is_method(),
      nb::name("can_access_peer"), nb::scope(device), nb::arg("peer").none(),
      "Whether this device's kernels can use `peer`'s memory directly (False for itself).");
  device.attr("enable_peer_access") = nb::cpp_function(
      [](const Device& d, nb::handle peer) { enable_peer_access(d, device_of(peer, "Device.enable_peer_access")); }, nb::is_method(),
      nb::name("enable_peer_access"), nb::scope(device), nb::arg("peer").none(),
      "Let this device's kernels use memory allocated on `peer` (idempotent; ValueError when the "
      "hardware cannot).");
  device.attr("disable_peer_access") = nb::cpp_function(
      [](const Device& d, nb::handle peer) { disable_peer_access(d, device_of(peer, "Device.disable_peer_access")); }, nb::is_method(),
      nb::name("disable_peer_access"), nb::scope(device), nb::arg("peer").none(), "Undo enable_peer_access (idempotent).");
}

}  // namespace nanocuda::py
