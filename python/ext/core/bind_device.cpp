// Python bindings for Device (cuda.core's shape: one object per ordinal per thread),
// DeviceProperties, Context; every CUdevice_attribute is also a read-only property.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.h"
#include "core/py_size.h"
#include "core/py_device.h"
#include "interop/interop.h"
#include "nanocuda/core/device.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/driver_api.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

nb::handle g_compute_capability;  // the ComputeCapability named tuple type (module holds it)
nb::handle g_properties_cache;    // {ordinal: DeviceProperties} (module holds it)

// cuda.core's DeviceProperties: the attribute table under cuda.core's names, each value read
// from the driver once and then cached (attributes never change for a device).
struct DeviceProperties {
  Device device;
  std::vector<int> values;
  std::vector<char> known;
  explicit DeviceProperties(const Device& d, std::size_t n) : device(d), values(n), known(n) {}
  int get(std::size_t i, CUdevice_attribute a) {
    if (!known[i]) {
      values[i] = device.attribute(a);
      known[i] = 1;
    }
    return values[i];
  }
};

int current_ordinal() { return Device::current_ordinal(); }

// A function of the nanocuda.texture package (imported on first use, never at import).
nb::object texture_call(const char* module, const char* name) {
  return nb::module_::import_((std::string("nanocuda.texture.") + module).c_str()).attr(name);
}

nb::object properties_of(const Device& d) {
  nb::int_ key(d.ordinal());
  if (PyObject* hit = PyDict_GetItemWithError(g_properties_cache.ptr(), key.ptr())) return nb::borrow(hit);
  if (PyErr_Occurred()) throw nb::python_error();
  std::size_t n = 0;
  (void)device_attributes(&n);
  nb::object made = nb::cast(DeviceProperties(d, n));
  PyDict_SetItem(g_properties_cache.ptr(), key.ptr(), made.ptr());
  return made;
}

PyStream create_stream(const Device& d, nb::handle obj, nb::handle options) {
  if (!obj.is_none()) {
    if (!options.is_none())
      throw nb::value_error("Device.create_stream: pass either obj (a foreign stream to adopt) or "
                            "options, not both");
    return adopt_stream(obj, "Device.create_stream");
  }
  check_option_names(options, "Device.create_stream", {"nonblocking", "priority"});
  bool nonblocking = bool_option(options, "nonblocking", true);
  nb::object priority = option(options, "priority");
  int prio = 0;  // the lowest priority, cuda.core's default
  if (!priority.is_none()) {
    if (!PyIndex_Check(priority.ptr()) || PyBool_Check(priority.ptr()))
      throw nb::type_error(("Device.create_stream: priority must be an int or None, got " +
                            std::string(Py_TYPE(priority.ptr())->tp_name)).c_str());
    prio = static_cast<int>(int_arg(priority, "Device.create_stream", "priority", -1024, 1024));
  }
  return PyStream(Stream::create(d, nonblocking, prio));
}

}  // namespace

int device_ordinal_arg(nb::handle obj, const char* call) {
  // None and "cuda" name no device: the core's default-device rule answers (Device()).
  int ordinal = device_ordinal_arg(obj, call, -1);
  return ordinal < 0 ? current_ordinal() : ordinal;
}

int device_ordinal_arg(nb::handle obj, const char* call, int if_none) {
  if (obj.is_none()) return if_none;
  if (nb::isinstance<Device>(obj)) return nb::cast<const Device&>(obj).ordinal();
  // torch's spelling ("cuda", "cuda:1"), which torch users type by habit.
  if (PyUnicode_Check(obj.ptr())) {
    std::string s = nb::cast<std::string>(obj);
    if (s == "cuda") return if_none;
    if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.size() < 12 &&
        s.find_first_not_of("0123456789", 5) == std::string::npos)
      return std::stoi(s.substr(5));
    throw nb::value_error((std::string(call) + ": device '" + s + "' is not a device; give an int ordinal, "
                           "a Device, or 'cuda:N'").c_str());
  }
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw nb::type_error((std::string(call) + ": device_id must be an int ordinal, a Device, 'cuda:N' or "
                          "None, got " + Py_TYPE(obj.ptr())->tp_name).c_str());
  nb::object i = nb::steal(PyNumber_Index(obj.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || v < 0 || v > 1 << 20)
    throw nb::value_error((std::string(call) + ": device_id must be a non-negative ordinal, got " +
                           nb::str(i).c_str()).c_str());
  return static_cast<int>(v);  // Device(v) checks it against the device count
}

void bind_device(nb::module_& m) {
  m.attr("ComputeCapability") = nb::module_::import_("collections").attr("namedtuple")(
      "ComputeCapability", nb::make_tuple("major", "minor"), nb::arg("module") = "nanocuda");
  g_compute_capability = m.attr("ComputeCapability");
  internal_module(m).attr("device_properties_cache") = nb::dict();
  g_properties_cache = internal_module(m).attr("device_properties_cache");

  nb::class_<Context>(m, "Context",
                      "A CUDA context: a device's primary context (shared with PyTorch), or a green "
                      "context (Device.create_context).",
                     nb::is_weak_referenceable())
      .def_prop_ro("handle", [](const Context& c) { return reinterpret_cast<std::uintptr_t>(c.handle()); },
                   "The CUcontext handle as an int.")
      .def_prop_ro("device", [](const Context& c) { return device_object(c.device_ordinal()); },
                   "The Device this context belongs to.")
      .def("__eq__", [](const Context& a, nb::handle b) {
        return nb::isinstance<Context>(b) && a.handle() == nb::cast<const Context&>(b).handle();
      })
      .def("__hash__", [](const Context& c) { return reinterpret_cast<std::uintptr_t>(c.handle()); });

  auto props = nb::class_<DeviceProperties>(m, "DeviceProperties",
                                            "Every device attribute under cuda.core's names, read "
                                            "once and cached (Device.properties).");
  auto cls = nb::class_<Device>(m, "Device", "A CUDA device, using its primary context (shared "
                                             "with PyTorch and CuPy). As in cuda.core, there is one "
                                             "Device object per ordinal per thread: Device(0) is "
                                             "Device(0); Device() is the current device (or 0); "
                                             "making one does not initialize the GPU.\n\n"
                                             "Example::\n\n"
                                             "    d = nanocuda.Device(0)\n"
                                             "    print(d.name, d.compute_capability, d.memory_info)\n",
                                nb::is_weak_referenceable())
      .def(nb::new_([](nb::handle device_id) -> nb::object {
             if (nb::isinstance<Device>(device_id)) return nb::borrow(device_id);
             return device_object(device_ordinal_arg(device_id, "Device"));
           }), nb::arg("device_id") = nb::none(),
           "The Device of ordinal `device_id` (a Device is returned as is; None: the current "
           "context's device, else 0).")
      .def_static("count", &Device::count, "Number of CUDA devices.")
      .def_static("get_all_devices", [](nb::args args, nb::kwargs kwargs) {
                    // Takes nothing; said plainly rather than with nanobind's overload text.
                    if (args.size() || kwargs.size())
                      throw nb::type_error(("Device.get_all_devices() takes no arguments, got " +
                                            std::to_string(args.size() + kwargs.size())).c_str());
                    int n = Device::count();
                    nb::list all;
                    for (int i = 0; i < n; ++i) all.append(device_object(i));
                    return nb::tuple(all);
                  }, "Every device, as a tuple of this thread's Device objects (cuda.core's name).")
      .def_static("driver_version", &Device::driver_version,
                  "The driver's CUDA version, major*1000 + minor*10.")
      .def_prop_ro("ordinal", &Device::ordinal, "The device index (0, 1, ...).")
      .def_prop_ro("device_id", &Device::ordinal, "The device index (cuda.core's name for ordinal).")
      .def_prop_ro("name", &Device::name, "The product name, e.g. 'NVIDIA H100 80GB HBM3'.")
      .def_prop_ro("uuid", [](const Device& d) { return d.uuid_string(false); },
                   "'xxxxxxxx-xxxx-...' as cuda.core gives it (nvidia-smi's form without 'GPU-').")
      .def("to_system_device", [](const Device& d) {
             // NVML finds the device by the same UUID (nanocuda.system.Device, over NVML).
             return nb::module_::import_("nanocuda.system").attr("Device")(nb::arg("uuid") = d.uuid_string());
           }, "This device as NVML sees it: a nanocuda.system.Device (needs NVML).")
      .def_prop_ro("compute_capability", [](const Device& d) {
             auto [major, minor] = d.compute_capability();
             return g_compute_capability(major, minor);
           }, "ComputeCapability(major, minor), a named tuple.")
      .def_prop_ro("pci_bus_id", &Device::pci_bus_id_text,
                   "'0000:00:06.0' (domain:bus:device.function), as cuda.core gives it; the bus number "
                   "alone is properties.pci_bus_id.")
      .def_prop_ro("arch", &Device::arch, "Compute capability as text, '90' for 9.0 (cuda.core's).")
      .def_prop_ro("target_arch", &Device::target_arch,
                   "The target nanocuda compiles for by default: '90a' for 9.0 (arch-specific features).")
      .def_prop_ro("total_memory", &Device::total_memory, "Bytes of device memory.")
      .def_prop_ro("memory_info", &Device::memory_info, "(free, total) bytes.")
      .def_prop_ro("properties", &properties_of, "DeviceProperties: every attribute, cached.")
      .def_prop_ro("context", [](const Device& d) { return *d.context(); },
                   "The device's primary context (retained on first use).")
      .def_prop_ro("default_stream", [](const Device& d) { return PyStream(StreamRef::default_for(d)); },
                   "The legacy default stream of this device.")
      // set_current(ctx=None): bind_green_context.cpp (it also takes a green Context).
      .def("sync", &Device::sync, "Wait for all work on the device.")
      .def("create_stream", &create_stream, nb::arg("obj") = nb::none(), nb::arg("options") = nb::none(),
           "A new Stream on this device with StreamOptions(nonblocking=True, priority=None) (a "
           "dict or None also work), or `obj` (anything with __cuda_stream__) adopted.")
      .def("create_event", [](const Device& d, nb::handle options) {
             return event_from_options(d, options, "Device.create_event");
           }, nb::arg("options") = nb::none(),
           "A new Event from EventOptions(enable_timing=False, busy_waited_sync=False, "
           "ipc_enabled=False) (a dict or None also work).")
      // Textures and surfaces: the nanocuda.texture package makes its cuda.core-shaped objects
      // over _nanocuda._texture; these are cuda.core's entry points to it.
      .def("create_opaque_array", [](nb::handle self, nb::handle options) {
             return texture_call("_array", "_create_opaque_array")(self, options);
           }, nb::arg("options").none(),  // None reaches the Python check, which names the call
           "A new nanocuda.texture.OpaqueArray from OpaqueArrayOptions(shape, format, num_channels, "
           "is_surface_load_store=False) (or a dict of them).")
      .def("create_mipmapped_array", [](nb::handle self, nb::handle options) {
             return texture_call("_mipmapped_array", "_create_mipmapped_array")(self, options);
           }, nb::arg("options").none(),
           "A new nanocuda.texture.MipmappedArray from MipmappedArrayOptions(shape, format, "
           "num_channels, num_levels, is_surface_load_store=False) (or a dict of them).")
      .def("create_texture_object", [](nb::handle self, nb::handle resource, nb::handle options) {
             return texture_call("_texture", "_create_texture_object")(self, resource, options);
           }, nb::arg("resource").none(), nb::arg("options").none() = nb::none(),
           "A new nanocuda.texture.TextureObject reading `resource` (a ResourceDescriptor) as "
           "`options` (TextureObjectOptions, a dict of them, or None for the defaults) say.")
      .def("create_surface_object", [](nb::handle self, nb::handle resource) {
             return texture_call("_surface", "_create_surface_object")(self, resource);
           }, nb::arg("resource").none(),
           "A new nanocuda.texture.SurfaceObject over `resource` (a ResourceDescriptor of an "
           "OpaqueArray made with is_surface_load_store=True).")
      .def("attribute", [](const Device& d, nb::handle attr) {
             return d.attribute(static_cast<CUdevice_attribute>(
                 int_arg(attr, "Device.attribute", "attribute (a CUdevice_attribute number)", 1, INT32_MAX)));
           }, nb::arg("attribute").none(), "Any CUdevice_attribute by its numeric value.")
      .def("__eq__", [](const Device& a, nb::handle b) {
        return nb::isinstance<Device>(b) && a == nb::cast<const Device&>(b);
      })
      .def("__hash__", [](const Device& d) { return d.ordinal(); })
      .def("__index__", [](const Device& d) { return d.ordinal(); },
           "The ordinal, so a Device works wherever an ordinal is taken.")
      .def("__int__", [](const Device& d) { return d.ordinal(); });

  std::size_t n = 0;
  const DeviceAttributeInfo* attrs = device_attributes(&n);
  nb::dict table;
  for (std::size_t i = 0; i < n; ++i) {
    CUdevice_attribute a = attrs[i].attribute;
    if (std::string_view(attrs[i].name) != "pci_bus_id")  // cuda.core's Device.pci_bus_id is the text (below)
      cls.def_prop_ro(attrs[i].name, [a](const Device& d) { return d.attribute(a); }, attrs[i].doc);
    if (attrs[i].is_flag)
      props.def_prop_ro(attrs[i].name, [i, a](DeviceProperties& p) { return p.get(i, a) != 0; }, attrs[i].doc);
    else
      props.def_prop_ro(attrs[i].name, [i, a](DeviceProperties& p) { return p.get(i, a); }, attrs[i].doc);
    table[attrs[i].name] = static_cast<int>(a);
  }
  props.def("__repr__", [](const DeviceProperties& p) {
    return "<nanocuda.DeviceProperties of device " + std::to_string(p.device.ordinal()) + ">";
  });
  m.attr("DEVICE_ATTRIBUTES") = table;
}

}  // namespace nanocuda::py
