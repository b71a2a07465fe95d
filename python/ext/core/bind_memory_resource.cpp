// Python bindings for the memory resources (subclassable MemoryResource, device pools,
// pinned, managed and virtual memory) and Device.memory_resource / Device.allocate.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <climits>
#include <array>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "bindings.h"
#include "core/py_memory_resource.h"
#include "core/py_device.h"
#include "core/py_size.h"
#include "core/vmm_policy.h"
#include "core/seen_buffers.h"
#include "interop/interop.h"
#include "fastpath/fastcall_signature.h"
#include "fastpath/fastcall.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/core/managed_memory_resource.h"
#include "nanocuda/core/pinned_memory_resource.h"
#include "nanocuda/core/virtual_memory_resource.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

int ordinal_of(nb::handle device, const char* call) {
  return device_ordinal_arg(device, call);
}

// Options are None, the named options class (nanocuda's, or cuda.core's class of the same
// name) or a dict of its fields (as cuda.core takes them), converted by
// nanocuda._memory_options.coerce_options, which names the call and any unknown key or bad
// value; another resource's options is a TypeError, never silently read as "no options".
nb::object check_options_class(nb::handle options, const char* call, const char* cls) {
  if (options.is_none() || std::strcmp(Py_TYPE(options.ptr())->tp_name, cls) == 0) return nb::borrow(options);
  return nb::module_::import_("nanocuda._memory_options").attr("coerce_options")(call, cls, options);
}

// cuda.core's resources take the options first (PinnedMemoryResource(options)): an options
// object or dict in the device's place moves to `options`.
void options_first(nb::handle& device, nb::handle& options, const char* field) {
  if (options.is_none() && !device.is_none() && !PyIndex_Check(device.ptr()) &&
      (PyDict_Check(device.ptr()) || nb::hasattr(device, field)))
    std::swap(device, options);
}

template <class T>
T option(nb::handle options, const char* name, T fallback) {
  if (options.is_none() || !nb::hasattr(options, name)) return fallback;
  nb::object v = options.attr(name);
  return v.is_none() ? fallback : nb::cast<T>(v);
}

// MemoryResource.__init__ for Python subclasses: constructs the C++ part once, so a
// subclass whose __init__ never calls super().__init__() (cuda.core does not require it)
// still works; nanocuda._memory_resource runs it before every subclass's own __init__.
void init_memory_resource(nb::handle self) {
  if (nb::inst_ready(self)) return;
  new (nb::inst_ptr<PyMemoryResource>(self)) PyMemoryResource();
  nb::inst_mark_ready(self);
}


// Location for prefetch/advise: a Device or ordinal, or "cpu"/"host"/-1.
int location_of(nb::handle location, int fallback) {
  if (location.is_none()) return fallback;
  if (nb::isinstance<nb::str>(location)) {
    std::string s = nb::cast<std::string>(location);
    if (s == "cpu" || s == "host") return -1;
    throw nb::value_error(("ManagedMemoryResource: location '" + s + "' is not \"cpu\", \"host\" or a device").c_str());
  }
  nb::object index = nb::getattr(location, "__index__", nb::none());  // an int, a Device
  if (index.is_none() || PyBool_Check(location.ptr()))
    throw nb::type_error(("ManagedMemoryResource: location must be a Device, a device ordinal, \"cpu\" or None, got " +
                          std::string(Py_TYPE(location.ptr())->tp_name)).c_str());
  return static_cast<int>(int_arg(index(), "ManagedMemoryResource", "location", INT_MIN, INT_MAX));
}

const PyBuffer& open_buffer(nb::handle obj, const char* call) {
  if (!nb::isinstance<PyBuffer>(obj))
    throw nb::type_error((std::string(call) + ": expects a nanocuda.Buffer").c_str());
  const auto& b = nb::cast<const PyBuffer&>(obj);
  if (b.buffer.is_closed())
    throw nb::value_error((std::string(call) + ": " + b.buffer.describe() + " is closed").c_str());
  return b;
}

std::string hex_address(uint64_t ptr) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(ptr));
  return text;
}

void py_deallocate(nb::handle self, nb::handle target, nb::handle size, nb::handle stream) {
  auto& mr = nb::cast<MemoryResource&>(self);
  if (nb::isinstance<PyBuffer>(target)) {
    auto& b = nb::cast<PyBuffer&>(target);
    if (b.buffer.is_closed())
      throw nb::value_error(("MemoryResource.deallocate: " + b.buffer.describe() + " was already freed").c_str());
    if (b.buffer.memory_resource().get() != &mr)
      throw nb::value_error(("MemoryResource.deallocate: " + b.buffer.describe() + " was not allocated by " +
                             mr.describe()).c_str());
    if (!size.is_none()) size_arg(size, "MemoryResource.deallocate");  // checked; the Buffer knows its size
    if (stream.is_none()) b.buffer.close();
    else b.buffer.close(to_stream(stream, "MemoryResource.deallocate"));
    return;
  }
  if (size.is_none()) throw nb::value_error("MemoryResource.deallocate: pass size= with a raw address");
  if (PyBool_Check(target.ptr()) || !PyLong_Check(target.ptr()))
    throw nb::type_error(("MemoryResource.deallocate: buffer must be a nanocuda.Buffer or an int address, got " +
                          std::string(Py_TYPE(target.ptr())->tp_name)).c_str());
  uint64_t ptr = size_arg(target, "MemoryResource.deallocate", "the address");
  // Freeing a live Buffer's address here would free it twice (the Buffer's own close).
  if (const PyBuffer* owner = live_buffer_at(mr, ptr))
    throw nb::value_error(("MemoryResource.deallocate(" + hex_address(ptr) + ", ...): that address belongs to a live " +
                           owner->buffer.describe() + "; close the Buffer instead").c_str());
  mr.deallocate(ptr, size_arg(size, "MemoryResource.deallocate"), stream_for(stream, mr.device_id(), "MemoryResource.deallocate"));
}

}  // namespace

void bind_memory_resource(nb::module_& m) {
  nb::class_<MemoryResource, PyMemoryResource>(
      m, "MemoryResource",
      "Where Buffers' memory comes from. Subclass it in Python: implement allocate(size, stream) "
      "returning Buffer.from_handle(ptr, size, mr=self), deallocate(ptr, size, stream), and the "
      "is_device_accessible / is_host_accessible / device_id properties.",
      nb::is_weak_referenceable())  // inherited by every resource class
      .def("__init__", &init_memory_resource, "A resource implemented in Python (subclass it).")
      .def("allocate", &py_allocate, nb::arg("size").none(), nb::arg("stream") = nb::none(),
           "A Buffer of `size` bytes, allocated in the order of `stream` (default: the device's "
           "legacy stream). Example: ``buf = mr.allocate(1 << 20, stream=s)``.")
      .def("deallocate", &py_deallocate, nb::arg("buffer").none(), nb::arg("size") = nb::none(),
           nb::arg("stream") = nb::none(),
           "Free a Buffer of this resource (ValueError when freed twice or from another "
           "resource), or a raw address with its size, in the order of `stream`.")
      .def_prop_ro("is_device_accessible", &MemoryResource::is_device_accessible, "Kernels can use the memory.")
      .def_prop_ro("is_host_accessible", &MemoryResource::is_host_accessible, "The CPU can use the memory.")
      .def_prop_ro("device_id", &MemoryResource::device_id, "The device of the memory, -1 for host memory.")
      .def_prop_ro("is_managed", &MemoryResource::is_managed,
                   "The memory is managed (unified): one address on the host and every device.")
      .def("__repr__", [](const MemoryResource& r) { return "<nanocuda." + r.describe() + ">"; });

  nb::class_<MemoryPoolAttributes>(m, "MemoryPoolAttributes", "A pool's counters, in bytes, and reuse policy, when read.")
      .def_ro("reserved_mem_current", &MemoryPoolAttributes::reserved_mem_current, "Memory the pool holds from the device.")
      .def_ro("reserved_mem_high", &MemoryPoolAttributes::reserved_mem_high, "High-water mark of reserved_mem_current.")
      .def_ro("used_mem_current", &MemoryPoolAttributes::used_mem_current, "Memory in live allocations.")
      .def_ro("used_mem_high", &MemoryPoolAttributes::used_mem_high, "High-water mark of used_mem_current.")
      .def_ro("release_threshold", &MemoryPoolAttributes::release_threshold, "Reserved memory kept after a sync.")
      .def_ro("reuse_follow_event_dependencies", &MemoryPoolAttributes::reuse_follow_event_dependencies,
              "Freed memory is reused by streams that waited on the freeing stream's events.")
      .def_ro("reuse_allow_opportunistic", &MemoryPoolAttributes::reuse_allow_opportunistic,
              "Freed memory is reused once its free has completed, from any stream.")
      .def_ro("reuse_allow_internal_dependencies", &MemoryPoolAttributes::reuse_allow_internal_dependencies,
              "The driver may insert waits to reuse freed memory.")
      .def("__repr__", [](const MemoryPoolAttributes& a) {
        auto flag = [](bool b) { return std::string(b ? "True" : "False"); };
        return "MemoryPoolAttributes(release_threshold=" + std::to_string(a.release_threshold) +
               ", reserved_mem_current=" + std::to_string(a.reserved_mem_current) +
               ", reserved_mem_high=" + std::to_string(a.reserved_mem_high) +
               ", reuse_allow_internal_dependencies=" + flag(a.reuse_allow_internal_dependencies) +
               ", reuse_allow_opportunistic=" + flag(a.reuse_allow_opportunistic) +
               ", reuse_follow_event_dependencies=" + flag(a.reuse_follow_event_dependencies) +
               ", used_mem_current=" + std::to_string(a.used_mem_current) +
               ", used_mem_high=" + std::to_string(a.used_mem_high) + ")";
      });

  nb::class_<DeviceMemoryResource, MemoryResource>(
      m, "DeviceMemoryResource",
      "Device memory from a stream-ordered pool: the device's current pool (options=None) or a "
      "new one from DeviceMemoryResourceOptions (ipc_enabled, max_size, release_threshold).")
      .def("__init__",
           [](DeviceMemoryResource* self, nb::handle device, nb::handle options) {
             Device d(ordinal_of(device, "DeviceMemoryResource"));
             nb::object opts = check_options_class(options, "DeviceMemoryResource", "DeviceMemoryResourceOptions");
             options = opts;
             if (options.is_none()) {
               new (self) DeviceMemoryResource(d);
               return;
             }
             DeviceMemoryResourceOptions o;
             o.ipc_enabled = bool_arg(options.attr("ipc_enabled"), "DeviceMemoryResourceOptions", "ipc_enabled");
             o.max_size = size_arg(options.attr("max_size"), "DeviceMemoryResourceOptions", "max_size");
             o.release_threshold = size_arg(options.attr("release_threshold"), "DeviceMemoryResourceOptions", "release_threshold");
             new (self) DeviceMemoryResource(d, o);
           },
           nb::arg("device_id").none(), nb::arg("options") = nb::none())
      .def_prop_ro("is_handle_owned", &DeviceMemoryResource::is_owned, "True for a pool this resource created (and closes).")
      .def_prop_ro("is_ipc_enabled", &DeviceMemoryResource::is_ipc_enabled, "Its buffers can be sent to other processes.")
      .def_prop_ro("is_mapped", &DeviceMemoryResource::is_mapped, "Imported from another process (imports buffers only).")
      .def_prop_ro("is_closed", &DeviceMemoryResource::is_closed, "close() was called.")
      .def_prop_ro("handle", [](const DeviceMemoryResource& r) { return reinterpret_cast<uintptr_t>(r.handle()); },
                   "The CUmemoryPool as an int.")
      .def_prop_ro("uuid", [](const DeviceMemoryResource& r) -> nb::object {
                     return r.is_ipc_enabled() ? uuid_object(r.uuid()) : nb::none();
                   }, "The pool's uuid.UUID, what importers key their mapping on (None without IPC).")
      .def_prop_ro("attributes", &DeviceMemoryResource::attributes, "The pool's counters (MemoryPoolAttributes).")
      .def_prop_rw("release_threshold",
                   [](const DeviceMemoryResource& r) { return r.attributes().release_threshold; },
                   [](DeviceMemoryResource& r, nb::handle v) { r.set_release_threshold(size_arg(v, "release_threshold")); },
                   "Bytes the pool keeps reserved across syncs (0 returns memory eagerly).")
      .def("trim_to", [](DeviceMemoryResource& r, nb::handle n) { r.trim_to(size_arg(n, "DeviceMemoryResource.trim_to")); },
           nb::arg("min_bytes_to_keep").none(), "Return unused reserved memory to the device, keeping at least this much.")
      .def_prop_rw("peer_accessible_by", &DeviceMemoryResource::peer_accessible_by,
                   [](DeviceMemoryResource& r, nb::handle devices) {
                     if (!PySequence_Check(devices.ptr()) || PyUnicode_Check(devices.ptr()))
                       throw nb::type_error(("peer_accessible_by: assign a list of devices (ordinals or Devices), got " +
                                             std::string(Py_TYPE(devices.ptr())->tp_name)).c_str());
                     std::vector<int> want;
                     for (nb::handle d : devices) want.push_back(ordinal_of(d, "peer_accessible_by"));
                     for (int d : r.peer_accessible_by())
                       if (std::find(want.begin(), want.end(), d) == want.end()) r.set_peer_access(Device(d), false);
                     for (int d : want) r.set_peer_access(Device(d), true);
                   },
                   "Ordinals of the other devices whose kernels may use this pool's memory; assign a "
                   "list to grant (cuMemPoolSetAccess) and revoke.")
      .def("close", &DeviceMemoryResource::close,
           "Destroy an owned or mapped pool (memory still in Buffers is freed when they close); "
           "a current pool is left alone.")
      // The mapping of a pool in this process, of either kind (a uuid names one pool), or None:
      // unpickling reuses it (nanocuda._ipc).
      .def_static("_find_mapped", [](nb::bytes uuid) {
        std::array<unsigned char, 16> id{};
        if (uuid.size() != 16) throw nb::value_error("uuid must be 16 bytes");
        std::memcpy(id.data(), uuid.c_str(), 16);
        return find_mapped_pool(id);
      });

  auto pinned = nb::class_<PinnedMemoryResource, MemoryResource>(
      m, "PinnedMemoryResource",
      "Page-locked host memory readable by every device. PinnedMemoryResource(options): a new "
      "stream-ordered host pool (PinnedMemoryResourceOptions: ipc_enabled, max_size, numa_id); "
      "without options, cuMemHostAlloc memory (freeing waits for the buffer's stream). DLPack "
      "consumers see it as kDLCUDAHost.")
      .def("__init__", [](PinnedMemoryResource* self, nb::handle device, nb::handle options) {
             options_first(device, options, "ipc_enabled");
             nb::object opts = check_options_class(options, "PinnedMemoryResource", "PinnedMemoryResourceOptions");
             Device d(ordinal_of(device, "PinnedMemoryResource"));
             if (opts.is_none()) {
               new (self) PinnedMemoryResource(d);
               return;
             }
             PinnedMemoryResourceOptions o;
             o.ipc_enabled = bool_arg(opts.attr("ipc_enabled"), "PinnedMemoryResourceOptions", "ipc_enabled");
             o.max_size = size_arg(opts.attr("max_size"), "PinnedMemoryResourceOptions", "max_size");
             nb::object numa = nb::getattr(opts, "numa_id", nb::none());
             if (!numa.is_none())
               o.numa_id = static_cast<int>(int_arg(numa, "PinnedMemoryResourceOptions", "numa_id", INT32_MIN, INT32_MAX));
             new (self) PinnedMemoryResource(d, o);
           }, nb::arg("device_id") = nb::none(), nb::arg("options") = nb::none())
      .def_prop_ro("is_ipc_enabled", &PinnedMemoryResource::is_ipc_enabled, "Its buffers can be sent to other processes.")
      .def_prop_ro("numa_id", &PinnedMemoryResource::numa_id,
                   "The host NUMA node of the pool; -1 when the OS places the memory.")
      .def_prop_ro("is_mapped", &PinnedMemoryResource::is_mapped,
                   "Imported from another process (from_allocation_handle): imports buffers only.")
      .def_prop_ro("uuid", [](const PinnedMemoryResource& r) -> nb::object {
                     return r.is_ipc_enabled() ? uuid_object(r.uuid()) : nb::none();
                   }, "The pool's uuid.UUID, what importers key their mapping on (None without IPC).");
  bind_pool_members<PinnedMemoryResource>(pinned, "PinnedMemoryResource");

  auto managed = nb::class_<ManagedMemoryResource, MemoryResource>(
      m, "ManagedMemoryResource",
      "Unified memory, migrating between host and devices on use. ManagedMemoryResource(options): "
      "a new stream-ordered managed pool at the preferred location; without options, "
      "cuMemAllocManaged memory.")
      .def("__init__", [](ManagedMemoryResource* self, nb::handle device, nb::handle options) {
             options_first(device, options, "preferred_location");
             ManagedMemoryResourceOptions o;
             nb::object opts = check_options_class(options, "ManagedMemoryResource", "ManagedMemoryResourceOptions");
             options = opts;
             o.pool = !options.is_none();
             if (!options.is_none()) {
               // ManagedMemoryResourceOptions checked the pair; "host" is -1 here.
               nb::object loc = options.attr("preferred_location");
               nb::object kind = nb::getattr(options, "preferred_location_type", nb::none());
               o.host_numa = !kind.is_none() && nb::str(kind).equal(nb::str("host_numa"));
               if (!kind.is_none() && nb::str(kind).equal(nb::str("host"))) o.preferred_location = -1;
               else if (!loc.is_none()) o.preferred_location = nb::cast<int>(loc);
             }
             new (self) ManagedMemoryResource(Device(ordinal_of(device, "ManagedMemoryResource")), o);
           }, nb::arg("device_id") = nb::none(), nb::arg("options") = nb::none())
      .def_prop_ro("preferred_location", [](const ManagedMemoryResource& r) -> nb::object {
             const auto& loc = r.preferred_location();
             if (!loc) return nb::none();
             if (r.prefers_host_numa()) return nb::make_tuple("host_numa", *loc);
             if (*loc < 0) return nb::make_tuple("host", nb::none());
             return nb::make_tuple("device", *loc);
           }, "Where pages prefer to live: None (the driver decides), (\"device\", ordinal), (\"host\", None) "
              "or (\"host_numa\", node).")
      .def("prefetch",
           [](ManagedMemoryResource& r, nb::handle buffer, nb::handle location, nb::handle stream) {
             const PyBuffer& b = open_buffer(buffer, "ManagedMemoryResource.prefetch");
             int loc = location_of(location, r.device_id());
             StreamRef s = stream.is_none() ? b.buffer.stream() : to_stream(stream, "ManagedMemoryResource.prefetch");
             ManagedMemoryResource::prefetch(b.buffer.ptr(), b.buffer.size(), loc, s);
           },
           nb::arg("buffer").none(), nb::arg("location") = nb::none(), nb::kw_only(), nb::arg("stream") = nb::none(),
           "Migrate the buffer's pages to `location` (a Device or ordinal, or \"cpu\") in the order of "
           "`stream`. Example: ``mr.prefetch(buf, \"cpu\", stream=s)``.")
      .def("advise",
           [](ManagedMemoryResource& r, nb::handle buffer, const std::string& advice, nb::handle location) {
             const PyBuffer& b = open_buffer(buffer, "ManagedMemoryResource.advise");
             ManagedMemoryResource::advise(b.buffer.ptr(), b.buffer.size(), advice, location_of(location, r.device_id()));
           },
           nb::arg("buffer").none(), nb::arg("advice"), nb::arg("location") = nb::none(),
           "cuMemAdvise by name: set_read_mostly, set_preferred_location, set_accessed_by (and unset_*); "
           "`location` is a device or \"cpu\" (default: the resource's device).")
      .def_prop_ro("is_ipc_enabled", [](const ManagedMemoryResource&) { return false; },
                   "Always False: managed pools cannot be shared with other processes.")
      .def_prop_ro("is_mapped", &ManagedMemoryResource::is_mapped, "Imported from another process (never).");
  bind_pool_members<ManagedMemoryResource>(managed, "ManagedMemoryResource");

  nb::class_<VirtualMemoryResource, MemoryResource>(
      m, "VirtualMemoryResource",
      "Device memory mapped into a reserved address range (cuMemCreate/cuMemAddressReserve/cuMemMap): "
      "modify_allocation() grows a buffer in place, keeping its address.")
      .def("__init__",
           [](VirtualMemoryResource* self, nb::handle device, nb::handle options, nb::handle config) {
             // cuda.core's keyword is config=; options= (nanocuda's) is the same thing.
             if (!config.is_none() && !options.is_none())
               throw nb::type_error("VirtualMemoryResource: pass the options once (config= or options=)");
             if (!config.is_none()) options = config;
             VirtualMemoryResourceOptions o;
             nb::object opts = check_options_class(options, "VirtualMemoryResource", "VirtualMemoryResourceOptions");
             options = opts;
             o.reserve_size = option<std::size_t>(options, "reserve_size", o.reserve_size);
             if (!options.is_none() && nb::hasattr(options, "peers") && !options.attr("peers").is_none())
               for (nb::handle p : options.attr("peers")) o.peers.push_back(ordinal_of(p, "VirtualMemoryResourceOptions.peers"));
             read_vmm_policy(options, o, "VirtualMemoryResource");
             new (self) VirtualMemoryResource(Device(ordinal_of(device, "VirtualMemoryResource")), std::move(o));
           },
           nb::arg("device_id").none(), nb::arg("options") = nb::none(), nb::kw_only(), nb::arg("config") = nb::none())
      .def_prop_ro("config", [](const VirtualMemoryResource& r) { return vmm_config(r.options()); },
                   "The VirtualMemoryResourceOptions in use (cuda.core's name; modify_allocation(config=) changes it).")
      .def_prop_ro("granularity", &VirtualMemoryResource::granularity, "Mapping granularity in bytes (sizes round up to it).")
      .def_prop_ro("peers", [](const VirtualMemoryResource& r) { return r.options().peers; }, "Devices given access.")
      .def("add_peer", [](VirtualMemoryResource& r, nb::handle d) { r.add_peer(Device(ordinal_of(d, "add_peer"))); },
           nb::arg("device").none(), "Give `device` read-write access to every current and future mapping.")
      .def("modify_allocation",
           [](VirtualMemoryResource& r, nb::handle buffer, nb::handle new_size, nb::handle config) {
             if (!nb::isinstance<PyBuffer>(buffer)) throw nb::type_error("modify_allocation: expects a nanocuda.Buffer");
             auto& b = nb::cast<PyBuffer&>(buffer);
             std::size_t n = size_arg(new_size, "VirtualMemoryResource.modify_allocation", "new_size");
             if (!config.is_none()) {
               nb::object c = check_options_class(config, "VirtualMemoryResource.modify_allocation", "VirtualMemoryResourceOptions");
               VirtualMemoryResourceOptions policy = r.options();
               read_vmm_policy(c, policy, "VirtualMemoryResource.modify_allocation");
               r.set_policy(policy);
             }
             r.grow(b.buffer, n);
             if (b.shape.size() == 1) b.shape[0] = static_cast<int64_t>(b.buffer.size() / b.dtype.itemsize());
             return nb::borrow(buffer);
           },
           nb::arg("buffer").none(), nb::arg("new_size").none(), nb::kw_only(), nb::arg("config") = nb::none(),
           "Grow `buffer` to `new_size` bytes in place (same address, contents kept; a size not above "
           "its own leaves it as it is); ValueError past its reservation (VirtualMemoryResourceOptions."
           "reserve_size). `config` replaces the allocation policy for this and later mappings.");

  // Device's memory methods live here, beside the resources they route to.
  nb::handle device = nb::type<Device>();
  nb::object property = nb::module_::import_("builtins").attr("property");
  device.attr("memory_resource") = property(
      nb::cpp_function([](const Device& d) { return MemoryResource::for_device(d); }),
      nb::cpp_function([](const Device& d, nb::handle mr) {
                         MemoryResource::set_for_device(d, mr.is_none() ? nullptr
                                                                        : resource_arg(mr, "Device.memory_resource", "the resource"));
                       },
                       nb::arg("self"), nb::arg("resource").none()),
      nb::none(), "The resource Device.allocate and Buffer(size) use (default: the device's current pool); None resets it.");
  // Device.allocate, the C++ resources' allocate and Buffer.close: raw METH_FASTCALL methods.
  install_buffer_fast_paths();
}

}  // namespace nanocuda::py
