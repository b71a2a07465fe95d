// One GPU as NVML sees it (a non-owning view of an nvmlDevice_t), and NVML's system queries.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nanocuda/nvml/nvml_api.h"

namespace nanocuda::nvml {

// The NVML library's own version strings and the CUDA driver version NVML reports.
[[nodiscard]] std::string driver_version_string();  // "580.65.06"
[[nodiscard]] std::string nvml_version_string();    // "13.580.65.06"
[[nodiscard]] std::string driver_branch();          // "r580_00"
[[nodiscard]] int cuda_driver_version();            // 13000
[[nodiscard]] std::string process_name(unsigned pid);
[[nodiscard]] unsigned device_count();

struct PciInfo {
  unsigned domain, bus, device, vendor_id, device_id, subsystem_id, base_class, sub_class;
  std::string bus_id;
};

struct ProcessRecord {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;  // 0xFFFFFFFF outside MIG
};

// A device handle with its queries. Handles are owned by NVML and stay valid for the life
// of the process (nanocuda never calls nvmlShutdown), so this view is freely copyable.
class NvmlDevice {
 public:
  // The device at NVML index `index`; NvmlError (INVALID_ARGUMENT) past the count.
  static NvmlDevice by_index(unsigned index);
  static NvmlDevice by_uuid(const std::string& uuid);
  static NvmlDevice by_pci_bus_id(const std::string& bus_id);
  // The devices whose CPU affinity includes CPU `cpu` (Linux).
  static std::vector<NvmlDevice> with_cpu_affinity(unsigned cpu);

  explicit NvmlDevice(DeviceHandle h) noexcept : handle_(h) {}
  [[nodiscard]] DeviceHandle handle() const noexcept { return handle_; }
  // "NVML device 0" for error messages (never throws).
  [[nodiscard]] std::string describe() const;

  [[nodiscard]] unsigned index() const;
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::string uuid() const;  // "GPU-..." or "MIG-..."
  [[nodiscard]] std::string serial() const;
  [[nodiscard]] int brand() const;        // nvmlBrandType_t
  [[nodiscard]] unsigned arch() const;    // nvmlDeviceArchitecture_t
  [[nodiscard]] unsigned minor_number() const;
  [[nodiscard]] unsigned module_id() const;
  [[nodiscard]] unsigned numa_node_id() const;
  [[nodiscard]] std::pair<int, int> cuda_compute_capability() const;
  [[nodiscard]] Memory_v2 memory_info() const;
  [[nodiscard]] BAR1Memory bar1_memory_info() const;
  [[nodiscard]] PciInfo pci_info() const;
  // Which: 0 max link generation for device+system, 1 the GPU's max generation, 2 max width,
  // 3 current generation, 4 current width, 5 replay counter.
  [[nodiscard]] unsigned pcie_value(int which) const;
  // counter 0: TX, 1: RX, in KB/s.
  [[nodiscard]] unsigned pcie_throughput(int counter) const;
  // The affinity bitmask as 64-bit words; scope 0: NUMA node, 1: socket.
  [[nodiscard]] std::vector<std::uint64_t> cpu_affinity(int scope) const;
  [[nodiscard]] std::vector<std::uint64_t> memory_affinity(int scope) const;
  [[nodiscard]] bool persistence_mode() const;
  void set_persistence_mode(bool enabled) const;
  [[nodiscard]] bool display_connected() const;
  [[nodiscard]] bool display_active() const;
  [[nodiscard]] bool c2c_enabled() const;
  [[nodiscard]] unsigned addressing_mode() const;  // 0 none, 1 HMM, 2 ATS
  [[nodiscard]] RepairStatus_v1 repair_status() const;
  [[nodiscard]] int performance_state() const;
  [[nodiscard]] std::vector<int> supported_pstates() const;
  [[nodiscard]] DynamicPstatesInfo dynamic_pstates_info() const;
  [[nodiscard]] Utilization utilization() const;
  [[nodiscard]] unsigned long long clock_event_reasons(bool supported) const;
  [[nodiscard]] std::vector<ProcessRecord> compute_running_processes() const;
  [[nodiscard]] bool is_mig_device() const;
  // (current, pending) MIG mode.
  [[nodiscard]] std::pair<bool, bool> mig_mode() const;
  [[nodiscard]] unsigned max_mig_device_count() const;
  // The MIG device at `index`, or a null handle where that slot is empty (NOT_FOUND).
  [[nodiscard]] DeviceHandle mig_device(unsigned index) const;
  [[nodiscard]] NvmlDevice mig_parent() const;
  [[nodiscard]] std::vector<NvmlDevice> topology_nearest_gpus(int level) const;
  [[nodiscard]] unsigned long long supported_event_types() const;
  // The InfoROM: its image version, one object's version (0 OEM, 1 ECC, 2 power, 3 DEN),
  // the configuration checksum, a validation, the last black-box flush and the part number.
  [[nodiscard]] std::string inforom_image_version() const;
  [[nodiscard]] std::string inforom_version(int object) const;
  [[nodiscard]] unsigned inforom_checksum() const;
  void validate_inforom() const;
  [[nodiscard]] std::pair<unsigned long long, unsigned long> last_bbx_flush_time() const;
  [[nodiscard]] std::string board_part_number() const;
  // NVML field values for (field id, scope id) pairs; each carries its own nvml_return.
  [[nodiscard]] std::vector<FieldValue> field_values(const std::vector<std::pair<unsigned, unsigned>>& ids) const;
  void clear_field_values(const std::vector<std::pair<unsigned, unsigned>>& ids) const;
  [[nodiscard]] bool nvlink_state(unsigned link) const;
  [[nodiscard]] unsigned nvlink_version(unsigned link) const;  // nvmlNvlinkVersion_t

 private:
  DeviceHandle handle_;
};

// An NVML event set with some event types registered on one device; freed on destruction.
class NvmlEventSet {
 public:
  NvmlEventSet(const NvmlDevice& device, unsigned long long event_types);
  ~NvmlEventSet();
  NvmlEventSet(const NvmlEventSet&) = delete;
  NvmlEventSet& operator=(const NvmlEventSet&) = delete;

  // Waits up to `timeout_ms` for an event; NvmlError with code TIMEOUT when none came.
  [[nodiscard]] EventData wait(unsigned timeout_ms) const;
  [[nodiscard]] const NvmlDevice& device() const noexcept { return device_; }

 private:
  NvmlDevice device_;
  EventSetHandle set_ = nullptr;
};

}  // namespace nanocuda::nvml
