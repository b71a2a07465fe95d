// NVML glue for nanocuda.system: the C++ NvmlDevice and system queries, in _nanocuda._internal.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>

#include "bindings.h"
#include "nanocuda/nvml/nvml_device.h"
#include "nanocuda/nvml/nvml_system_events.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

using nvml::NvmlDevice;

std::uintptr_t handle_int(const NvmlDevice& d) { return reinterpret_cast<std::uintptr_t>(d.handle()); }

// A plain dict per NVML struct: the Python classes in nanocuda/system/_device.py wrap them.
nb::dict pci_dict(const nvml::PciInfo& p) {
  nb::dict d;
  d["domain"] = p.domain;
  d["bus"] = p.bus;
  d["device"] = p.device;
  d["vendor_id"] = p.vendor_id;
  d["device_id"] = p.device_id;
  d["subsystem_id"] = p.subsystem_id;
  d["base_class"] = p.base_class;
  d["sub_class"] = p.sub_class;
  d["bus_id"] = p.bus_id;
  return d;
}

// A field value's union as the Python number its value_type says.
nb::object field_number(const nvml::FieldValue& f) {
  switch (f.value_type) {
    case 0: return nb::float_(f.value.d);
    case 1: return nb::int_(f.value.ui);
    case 4: return nb::int_(f.value.sll);
    case 5: return nb::int_(f.value.si);
    case 6: return nb::int_(f.value.us);
    default: return nb::int_(f.value.ull);  // 2 (unsigned long) and 3; the union starts zeroed
  }
}

}  // namespace

void bind_nvml(nb::module_& m) {
  nb::module_ in = internal_module(m);
  in.def("nvml_state", &nvml::state, "0: NVML not loaded yet, 1: loaded, 2: loading failed.");
  in.def("nvml_initialize", [] { (void)nvml::api(); }, "Loads and initializes NVML (once).");
  in.def("nvml_driver_version", &nvml::driver_version_string);
  in.def("nvml_version", &nvml::nvml_version_string);
  in.def("nvml_driver_branch", &nvml::driver_branch);
  in.def("nvml_cuda_driver_version", &nvml::cuda_driver_version);
  in.def("nvml_process_name", &nvml::process_name, nb::arg("pid"));
  in.def("nvml_device_count", &nvml::device_count);

  nb::class_<NvmlDevice>(in, "NvmlDevice", "One GPU as NVML sees it (nanocuda.system.Device wraps it).")
      .def_static("by_index", &NvmlDevice::by_index, nb::arg("index"))
      .def_static("by_uuid", &NvmlDevice::by_uuid, nb::arg("uuid"))
      .def_static("by_pci_bus_id", &NvmlDevice::by_pci_bus_id, nb::arg("bus_id"))
      .def_static("with_cpu_affinity", &NvmlDevice::with_cpu_affinity, nb::arg("cpu"))
      .def_prop_ro("handle", &handle_int)
      .def("describe", &NvmlDevice::describe)
      .def("index", &NvmlDevice::index)
      .def("name", &NvmlDevice::name)
      .def("uuid", &NvmlDevice::uuid)
      .def("serial", &NvmlDevice::serial)
      .def("brand", &NvmlDevice::brand)
      .def("arch", &NvmlDevice::arch)
      .def("minor_number", &NvmlDevice::minor_number)
      .def("module_id", &NvmlDevice::module_id)
      .def("numa_node_id", &NvmlDevice::numa_node_id)
      .def("cuda_compute_capability", &NvmlDevice::cuda_compute_capability)
      .def("memory_info", [](const NvmlDevice& d) {
        nvml::Memory_v2 v = d.memory_info();
        return nb::make_tuple(v.free, v.total, v.used, v.reserved);
      }, "(free, total, used, reserved) bytes.")
      .def("bar1_memory_info", [](const NvmlDevice& d) {
        nvml::BAR1Memory v = d.bar1_memory_info();
        return nb::make_tuple(v.free, v.total, v.used);
      }, "(free, total, used) bytes.")
      .def("pci_info", [](const NvmlDevice& d) { return pci_dict(d.pci_info()); })
      .def("pcie_value", &NvmlDevice::pcie_value, nb::arg("which"))
      .def("pcie_throughput", &NvmlDevice::pcie_throughput, nb::arg("counter"))
      .def("cpu_affinity", &NvmlDevice::cpu_affinity, nb::arg("scope"))
      .def("memory_affinity", &NvmlDevice::memory_affinity, nb::arg("scope"))
      .def("persistence_mode", &NvmlDevice::persistence_mode)
      .def("set_persistence_mode", &NvmlDevice::set_persistence_mode, nb::arg("enabled"))
      .def("display_connected", &NvmlDevice::display_connected)
      .def("display_active", &NvmlDevice::display_active)
      .def("c2c_enabled", &NvmlDevice::c2c_enabled)
      .def("addressing_mode", &NvmlDevice::addressing_mode)
      .def("repair_status", [](const NvmlDevice& d) {
        nvml::RepairStatus_v1 r = d.repair_status();
        return nb::make_tuple(r.channel_repair_pending != 0, r.tpc_repair_pending != 0);
      }, "(channel_repair_pending, tpc_repair_pending).")
      .def("performance_state", &NvmlDevice::performance_state)
      .def("supported_pstates", &NvmlDevice::supported_pstates)
      .def("dynamic_pstates_info", [](const NvmlDevice& d) {
        nvml::DynamicPstatesInfo info = d.dynamic_pstates_info();
        nb::list out;
        for (const auto& u : info.utilization)
          out.append(nb::make_tuple(u.is_present != 0, u.percentage, u.inc_threshold, u.dec_threshold));
        return out;
      }, "[(is_present, percentage, inc_threshold, dec_threshold)] for each of NVML's 8 domains.")
      .def("utilization", [](const NvmlDevice& d) {
        nvml::Utilization u = d.utilization();
        return nb::make_tuple(u.gpu, u.memory);
      }, "(gpu, memory) percent.")
      .def("clock_event_reasons", &NvmlDevice::clock_event_reasons, nb::arg("supported"))
      .def("compute_running_processes", [](const NvmlDevice& d) {
        nb::list out;
        for (const auto& p : d.compute_running_processes())
          out.append(nb::make_tuple(p.pid, p.used_gpu_memory, p.gpu_instance_id, p.compute_instance_id));
        return out;
      }, "[(pid, used_gpu_memory, gpu_instance_id, compute_instance_id)].")
      .def("is_mig_device", &NvmlDevice::is_mig_device)
      .def("mig_mode", &NvmlDevice::mig_mode)
      .def("max_mig_device_count", &NvmlDevice::max_mig_device_count)
      .def("mig_device", [](const NvmlDevice& d, unsigned index) -> nb::object {
        nvml::DeviceHandle h = d.mig_device(index);
        if (!h) return nb::none();
        return nb::cast(NvmlDevice(h));
      }, nb::arg("index"))
      .def("mig_parent", &NvmlDevice::mig_parent)
      .def("topology_nearest_gpus", &NvmlDevice::topology_nearest_gpus, nb::arg("level"))
      .def("supported_event_types", &NvmlDevice::supported_event_types)
      .def("inforom_image_version", &NvmlDevice::inforom_image_version)
      .def("inforom_version", &NvmlDevice::inforom_version, nb::arg("object"))
      .def("inforom_checksum", &NvmlDevice::inforom_checksum)
      .def("validate_inforom", &NvmlDevice::validate_inforom)
      .def("last_bbx_flush_time", &NvmlDevice::last_bbx_flush_time)
      .def("board_part_number", &NvmlDevice::board_part_number)
      .def("field_values", [](const NvmlDevice& d, const std::vector<std::pair<unsigned, unsigned>>& ids) {
        nb::list out;
        for (const auto& f : d.field_values(ids))
          out.append(nb::make_tuple(f.field_id, f.scope_id, f.timestamp, f.latency_usec, f.nvml_return,
                                    field_number(f)));
        return out;
      }, nb::arg("ids"), "[(field_id, scope_id, timestamp, latency_usec, nvml_return, value)].")
      .def("clear_field_values", &NvmlDevice::clear_field_values, nb::arg("ids"))
      .def("nvlink_state", &NvmlDevice::nvlink_state, nb::arg("link"))
      .def("nvlink_version", &NvmlDevice::nvlink_version, nb::arg("link"));

  nb::class_<nvml::NvmlEventSet>(in, "NvmlEventSet", "An NVML event set registered on one device.")
      .def(nb::init<const NvmlDevice&, unsigned long long>(), nb::arg("device"), nb::arg("event_types"))
      .def("wait", [](const nvml::NvmlEventSet& s, unsigned timeout_ms) {
        nvml::EventData e{};
        {
          nb::gil_scoped_release release;  // waiting can take timeout_ms
          e = s.wait(timeout_ms);
        }
        return nb::make_tuple(reinterpret_cast<std::uintptr_t>(e.device), e.event_type, e.event_data,
                              e.gpu_instance_id, e.compute_instance_id);
      }, nb::arg("timeout_ms"), "(device handle, event type, event data, GPU instance, compute instance).");

  nb::class_<nvml::SystemEventSet>(in, "NvmlSystemEventSet", "An NVML system event set (driver bind/unbind).")
      .def(nb::init<unsigned long long>(), nb::arg("event_types"))
      .def("wait", [](const nvml::SystemEventSet& s, unsigned timeout_ms, unsigned buffer_size) {
        std::vector<nvml::SystemEvent> events;
        {
          nb::gil_scoped_release release;  // waiting can take timeout_ms
          events = s.wait(timeout_ms, buffer_size);
        }
        nb::list out;
        for (const auto& e : events) out.append(nb::make_tuple(e.event_type, e.gpu_id));
        return out;
      }, nb::arg("timeout_ms"), nb::arg("buffer_size"), "[(event type bit, packed PCI gpu id)].");
}

}  // namespace nanocuda::py
