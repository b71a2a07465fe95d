// Python bindings for Device; every CUdevice_attribute becomes a read-only property.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "nanocuda/core/device.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_device(nb::module_& m) {
  auto cls = nb::class_<Device>(m, "Device", "A CUDA device, using its primary context (shared "
                                             "with PyTorch and CuPy).\n\n"
                                             "Example::\n\n"
                                             "    d = nanocuda.Device(0)\n"
                                             "    print(d.name, d.compute_capability, d.memory_info)\n")
      .def(nb::init<int>(), nb::arg("ordinal") = 0, "The device with this ordinal (default 0).")
      .def_static("count", &Device::count, "Number of CUDA devices.")
      .def_static("driver_version", &Device::driver_version,
                  "The driver's CUDA version, major*1000 + minor*10.")
      .def_prop_ro("ordinal", &Device::ordinal, "The device index (0, 1, ...).")
      .def_prop_ro("name", &Device::name, "The product name, e.g. 'NVIDIA H100 80GB HBM3'.")
      .def_prop_ro("uuid", &Device::uuid_string, "'GPU-...' as nvidia-smi prints it.")
      .def_prop_ro("compute_capability", &Device::compute_capability, "(major, minor).")
      .def_prop_ro("arch", &Device::arch, "NVRTC target suffix, e.g. '90a'.")
      .def_prop_ro("total_memory", &Device::total_memory, "Bytes of device memory.")
      .def_prop_ro("memory_info", &Device::memory_info, "(free, total) bytes.")
      .def("set_current", &Device::set_current,
           "Make this device's primary context current on this thread.")
      .def("sync", &Device::sync, nb::call_guard<nb::gil_scoped_release>(),
           "Wait for all work on the device.")
      .def("attribute", [](const Device& d, int attr) {
             return d.attribute(static_cast<CUdevice_attribute>(attr));
           }, nb::arg("attribute"), "Any CUdevice_attribute by its numeric value.")
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__hash__", [](const Device& d) { return d.ordinal(); })
      .def("__index__", [](const Device& d) { return d.ordinal(); },
           "The ordinal, so a Device works wherever an ordinal is taken.")
      .def("__repr__", [](const Device& d) {
        return "<nanocuda.Device " + std::to_string(d.ordinal()) + ">";
      });

  std::size_t n = 0;
  const DeviceAttributeInfo* attrs = device_attributes(&n);
  nb::dict table;
  for (std::size_t i = 0; i < n; ++i) {
    CUdevice_attribute a = attrs[i].attribute;
    cls.def_prop_ro(attrs[i].name, [a](const Device& d) { return d.attribute(a); }, attrs[i].doc);
    table[attrs[i].name] = static_cast<int>(a);
  }
  m.attr("DEVICE_ATTRIBUTES") = table;
}

}  // namespace nanocuda::py
