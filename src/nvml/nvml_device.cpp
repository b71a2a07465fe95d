// NVML device and system queries: each is one checked call into the lazily loaded table.
#include "nanocuda/nvml/nvml_device.h"

#include <unistd.h>

#include <algorithm>

#include "nanocuda/nvml/nvml_error.h"

namespace nanocuda::nvml {

namespace {

// NVML's buffer sizes for strings (NVML_DEVICE_NAME_V2_BUFFER_SIZE and friends, rounded up).
constexpr unsigned kStringSize = 256;

template <class Call>
std::string read_string(Call&& call) {
  char buffer[kStringSize] = {};
  call(buffer, kStringSize);
  return std::string(buffer);
}

std::vector<std::uint64_t> to_words(const std::vector<unsigned long>& words) {
  return std::vector<std::uint64_t>(words.begin(), words.end());
}

}  // namespace

std::string driver_version_string() {
  return read_string([](char* b, unsigned n) { NANOCUDA_NVML_CALL("", nvmlSystemGetDriverVersion, b, n); });
}

std::string nvml_version_string() {
  return read_string([](char* b, unsigned n) { NANOCUDA_NVML_CALL("", nvmlSystemGetNVMLVersion, b, n); });
}

std::string driver_branch() {
  DriverBranchInfo_v1 info{};
  info.version = struct_version<DriverBranchInfo_v1>(1);
  NANOCUDA_NVML_CALL("", nvmlSystemGetDriverBranch, &info, sizeof(info.branch));
  info.branch[sizeof(info.branch) - 1] = '\0';
  return info.branch;
}

int cuda_driver_version() {
  int v = 0;
  NANOCUDA_NVML_CALL("", nvmlSystemGetCudaDriverVersion_v2, &v);
  return v;
}

std::string process_name(unsigned pid) {
  const std::string object = "pid " + std::to_string(pid);
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(object, nvmlSystemGetProcessName, pid, b, n); });
}

unsigned device_count() {
  unsigned n = 0;
  NANOCUDA_NVML_CALL("", nvmlDeviceGetCount_v2, &n);
  return n;
}

NvmlDevice NvmlDevice::by_index(unsigned index) {
  DeviceHandle h = nullptr;
  NANOCUDA_NVML_CALL("index " + std::to_string(index), nvmlDeviceGetHandleByIndex_v2, index, &h);
  return NvmlDevice(h);
}

NvmlDevice NvmlDevice::by_uuid(const std::string& uuid) {
  DeviceHandle h = nullptr;
  NANOCUDA_NVML_CALL("uuid '" + uuid + "'", nvmlDeviceGetHandleByUUID, uuid.c_str(), &h);
  return NvmlDevice(h);
}

NvmlDevice NvmlDevice::by_pci_bus_id(const std::string& bus_id) {
  DeviceHandle h = nullptr;
  NANOCUDA_NVML_CALL("PCI bus id '" + bus_id + "'", nvmlDeviceGetHandleByPciBusId_v2, bus_id.c_str(), &h);
  return NvmlDevice(h);
}

std::vector<NvmlDevice> NvmlDevice::with_cpu_affinity(unsigned cpu) {
  const std::string object = "CPU " + std::to_string(cpu);
  unsigned count = 0;
  // First call sizes the list (count 0 asks how many).
  {
    const auto& t = api();
    if (!t.nvmlSystemGetTopologyGpuSet)
      throw NvmlError(kErrorFunctionNotFound, "nvmlSystemGetTopologyGpuSet", object,
                      "the installed libnvidia-ml.so.1 lacks it");
    Return rc = t.nvmlSystemGetTopologyGpuSet(cpu, &count, nullptr);
    if (rc != kSuccess && rc != kErrorInsufficientSize) check(rc, "nvmlSystemGetTopologyGpuSet", object);
  }
  std::vector<DeviceHandle> handles(count);
  if (count) NANOCUDA_NVML_CALL(object, nvmlSystemGetTopologyGpuSet, cpu, &count, handles.data());
  std::vector<NvmlDevice> out;
  for (unsigned i = 0; i < count && i < handles.size(); ++i) out.emplace_back(handles[i]);
  return out;
}

std::string NvmlDevice::describe() const {
  const NvmlApi* t = g_nvml_table.load(std::memory_order_acquire);
  unsigned index = 0;
  if (t && t->nvmlDeviceGetIndex && t->nvmlDeviceGetIndex(handle_, &index) == kSuccess)
    return "NVML device " + std::to_string(index);
  return "NVML device";
}

unsigned NvmlDevice::index() const {
  unsigned v = 0;
  NANOCUDA_NVML_CALL("NVML device", nvmlDeviceGetIndex, handle_, &v);
  return v;
}

std::string NvmlDevice::name() const {
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetName, handle_, b, n); });
}

std::string NvmlDevice::uuid() const {
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetUUID, handle_, b, n); });
}

std::string NvmlDevice::serial() const {
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetSerial, handle_, b, n); });
}

#define NANOCUDA_NVML_SCALAR(method, type, entry)       \
  type NvmlDevice::method() const {                     \
    type v{};                                           \
    NANOCUDA_NVML_CALL(describe(), entry, handle_, &v); \
    return v;                                           \
  }
NANOCUDA_NVML_SCALAR(brand, int, nvmlDeviceGetBrand)
NANOCUDA_NVML_SCALAR(arch, unsigned, nvmlDeviceGetArchitecture)
NANOCUDA_NVML_SCALAR(minor_number, unsigned, nvmlDeviceGetMinorNumber)
NANOCUDA_NVML_SCALAR(module_id, unsigned, nvmlDeviceGetModuleId)
NANOCUDA_NVML_SCALAR(numa_node_id, unsigned, nvmlDeviceGetNumaNodeId)
NANOCUDA_NVML_SCALAR(bar1_memory_info, BAR1Memory, nvmlDeviceGetBAR1MemoryInfo)
NANOCUDA_NVML_SCALAR(performance_state, int, nvmlDeviceGetPerformanceState)
NANOCUDA_NVML_SCALAR(dynamic_pstates_info, DynamicPstatesInfo, nvmlDeviceGetDynamicPstatesInfo)
NANOCUDA_NVML_SCALAR(utilization, Utilization, nvmlDeviceGetUtilizationRates)
NANOCUDA_NVML_SCALAR(max_mig_device_count, unsigned, nvmlDeviceGetMaxMigDeviceCount)
NANOCUDA_NVML_SCALAR(supported_event_types, unsigned long long, nvmlDeviceGetSupportedEventTypes)
#undef NANOCUDA_NVML_SCALAR

std::pair<int, int> NvmlDevice::cuda_compute_capability() const {
  int major = 0, minor = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetCudaComputeCapability, handle_, &major, &minor);
  return {major, minor};
}

Memory_v2 NvmlDevice::memory_info() const {
  Memory_v2 m{};
  m.version = struct_version<Memory_v2>(2);
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetMemoryInfo_v2, handle_, &m);
  return m;
}

PciInfo NvmlDevice::pci_info() const {
  PciInfoExt_v1 p{};
  p.version = struct_version<PciInfoExt_v1>(1);
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetPciInfoExt, handle_, &p);
  p.bus_id[sizeof(p.bus_id) - 1] = '\0';
  // pciDeviceId packs the device id in the high 16 bits and the vendor id in the low 16.
  return PciInfo{p.domain, p.bus, p.device, p.pci_device_id & 0xFFFFu, p.pci_device_id >> 16,
                 p.pci_subsystem_id, p.base_class, p.sub_class, p.bus_id};
}

unsigned NvmlDevice::pcie_value(int which) const {
  unsigned v = 0;
  switch (which) {
    case 0: NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetMaxPcieLinkGeneration, handle_, &v); break;
    case 1: NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetGpuMaxPcieLinkGeneration, handle_, &v); break;
    case 2: NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetMaxPcieLinkWidth, handle_, &v); break;
    case 3: NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetCurrPcieLinkGeneration, handle_, &v); break;
    case 4: NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetCurrPcieLinkWidth, handle_, &v); break;
    default: NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetPcieReplayCounter, handle_, &v); break;
  }
  return v;
}

unsigned NvmlDevice::pcie_throughput(int counter) const {
  unsigned v = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetPcieThroughput, handle_, counter, &v);
  return v;
}

std::vector<std::uint64_t> NvmlDevice::cpu_affinity(int scope) const {
  const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_CONF));
  std::vector<unsigned long> words(static_cast<size_t>((cpus + 63) / 64));
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetCpuAffinityWithinScope, handle_,
                     static_cast<unsigned>(words.size()), words.data(), scope);
  return to_words(words);
}

std::vector<std::uint64_t> NvmlDevice::memory_affinity(int scope) const {
  std::vector<unsigned long> words(4);  // up to 256 NUMA nodes
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetMemoryAffinity, handle_,
                     static_cast<unsigned>(words.size()), words.data(), scope);
  return to_words(words);
}

bool NvmlDevice::persistence_mode() const {
  int v = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetPersistenceMode, handle_, &v);
  return v != 0;
}

void NvmlDevice::set_persistence_mode(bool enabled) const {
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceSetPersistenceMode, handle_, enabled ? 1 : 0);
}

bool NvmlDevice::display_connected() const {
  int v = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetDisplayMode, handle_, &v);
  return v != 0;
}

bool NvmlDevice::display_active() const {
  int v = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetDisplayActive, handle_, &v);
  return v != 0;
}

bool NvmlDevice::c2c_enabled() const {
  C2cModeInfo_v1 info{};
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetC2cModeInfoV, handle_, &info);
  return info.is_c2c_enabled != 0;
}

unsigned NvmlDevice::addressing_mode() const {
  AddressingMode_v1 m{};
  m.version = struct_version<AddressingMode_v1>(1);
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetAddressingMode, handle_, &m);
  return m.value;
}

RepairStatus_v1 NvmlDevice::repair_status() const {
  RepairStatus_v1 r{};
  r.version = struct_version<RepairStatus_v1>(1);
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetRepairStatus, handle_, &r);
  return r;
}

std::vector<int> NvmlDevice::supported_pstates() const {
  int states[16];
  std::fill(std::begin(states), std::end(states), 32);  // NVML_PSTATE_UNKNOWN
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetSupportedPerformanceStates, handle_, states, 16u);
  std::vector<int> out;
  for (int s : states)
    if (s >= 0 && s < 16) out.push_back(s);
  return out;
}

unsigned long long NvmlDevice::clock_event_reasons(bool supported) const {
  unsigned long long v = 0;
  if (supported)
    NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetSupportedClocksEventReasons, handle_, &v);
  else
    NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetCurrentClocksEventReasons, handle_, &v);
  return v;
}

std::vector<ProcessRecord> NvmlDevice::compute_running_processes() const {
  // The list can grow between the sizing call and the read: retry with room to spare.
  for (unsigned room = 16;; room *= 4) {
    std::vector<ProcessInfo_v2> infos(room);
    unsigned count = room;
    const auto& t = api();
    if (!t.nvmlDeviceGetComputeRunningProcesses_v3)
      throw NvmlError(kErrorFunctionNotFound, "nvmlDeviceGetComputeRunningProcesses_v3", describe(),
                      "the installed libnvidia-ml.so.1 lacks it");
    Return rc = t.nvmlDeviceGetComputeRunningProcesses_v3(handle_, &count, infos.data());
    if (rc == kErrorInsufficientSize && room < 65536) continue;
    check(rc, "nvmlDeviceGetComputeRunningProcesses_v3", describe());
    std::vector<ProcessRecord> out;
    for (unsigned i = 0; i < count && i < room; ++i)
      out.push_back({infos[i].pid, infos[i].used_gpu_memory, infos[i].gpu_instance_id,
                     infos[i].compute_instance_id});
    return out;
  }
}

bool NvmlDevice::is_mig_device() const {
  unsigned v = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceIsMigDeviceHandle, handle_, &v);
  return v != 0;
}

std::pair<bool, bool> NvmlDevice::mig_mode() const {
  unsigned current = 0, pending = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetMigMode, handle_, &current, &pending);
  return {current != 0, pending != 0};
}

DeviceHandle NvmlDevice::mig_device(unsigned index) const {
  DeviceHandle h = nullptr;
  const auto& t = api();
  if (!t.nvmlDeviceGetMigDeviceHandleByIndex)
    throw NvmlError(kErrorFunctionNotFound, "nvmlDeviceGetMigDeviceHandleByIndex", describe(),
                    "the installed libnvidia-ml.so.1 lacks it");
  Return rc = t.nvmlDeviceGetMigDeviceHandleByIndex(handle_, index, &h);
  if (rc == kErrorNotFound) return nullptr;
  check(rc, "nvmlDeviceGetMigDeviceHandleByIndex", describe());
  return h;
}

NvmlDevice NvmlDevice::mig_parent() const {
  DeviceHandle h = nullptr;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetDeviceHandleFromMigDeviceHandle, handle_, &h);
  return NvmlDevice(h);
}

std::vector<NvmlDevice> NvmlDevice::topology_nearest_gpus(int level) const {
  unsigned count = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetTopologyNearestGpus, handle_, level, &count, nullptr);
  std::vector<DeviceHandle> handles(count);
  if (count)
    NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetTopologyNearestGpus, handle_, level, &count, handles.data());
  std::vector<NvmlDevice> out;
  for (unsigned i = 0; i < count && i < handles.size(); ++i) out.emplace_back(handles[i]);
  return out;
}

std::string NvmlDevice::inforom_image_version() const {
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetInforomImageVersion, handle_, b, n); });
}

std::string NvmlDevice::inforom_version(int object) const {
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetInforomVersion, handle_, object, b, n); });
}

unsigned NvmlDevice::inforom_checksum() const {
  unsigned v = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetInforomConfigurationChecksum, handle_, &v);
  return v;
}

void NvmlDevice::validate_inforom() const { NANOCUDA_NVML_CALL(describe(), nvmlDeviceValidateInforom, handle_); }

std::pair<unsigned long long, unsigned long> NvmlDevice::last_bbx_flush_time() const {
  unsigned long long timestamp = 0;
  unsigned long duration_us = 0;
  NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetLastBBXFlushTime, handle_, &timestamp, &duration_us);
  return {timestamp, duration_us};
}

std::string NvmlDevice::board_part_number() const {
  return read_string([&](char* b, unsigned n) { NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetBoardPartNumber, handle_, b, n); });
}

namespace {

std::vector<FieldValue> field_requests(const std::vector<std::pair<unsigned, unsigned>>& ids) {
  std::vector<FieldValue> values(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    values[i] = FieldValue{};
    values[i].field_id = ids[i].first;
    values[i].scope_id = ids[i].second;
  }
  return values;
}

}  // namespace

std::vector<FieldValue> NvmlDevice::field_values(const std::vector<std::pair<unsigned, unsigned>>& ids) const {
  std::vector<FieldValue> values = field_requests(ids);
  if (!values.empty())
    NANOCUDA_NVML_CALL(describe(), nvmlDeviceGetFieldValues, handle_, static_cast<int>(values.size()), values.data());
  return values;
}

void NvmlDevice::clear_field_values(const std::vector<std::pair<unsigned, unsigned>>& ids) const {
  std::vector<FieldValue> values = field_requests(ids);
  if (!values.empty())
    NANOCUDA_NVML_CALL(describe(), nvmlDeviceClearFieldValues, handle_, static_cast<int>(values.size()), values.data());
}

bool NvmlDevice::nvlink_state(unsigned link) const {
  int active = 0;
  NANOCUDA_NVML_CALL(describe() + " link " + std::to_string(link), nvmlDeviceGetNvLinkState, handle_, link, &active);
  return active != 0;
}

unsigned NvmlDevice::nvlink_version(unsigned link) const {
  unsigned v = 0;
  NANOCUDA_NVML_CALL(describe() + " link " + std::to_string(link), nvmlDeviceGetNvLinkVersion, handle_, link, &v);
  return v;
}

NvmlEventSet::NvmlEventSet(const NvmlDevice& device, unsigned long long event_types) : device_(device) {
  NANOCUDA_NVML_CALL(device.describe(), nvmlEventSetCreate, &set_);
  if (event_types == 0) return;  // an empty set: waiting on it times out
  try {
    NANOCUDA_NVML_CALL(device.describe(), nvmlDeviceRegisterEvents, device.handle(), event_types, set_);
  } catch (...) {
    api().nvmlEventSetFree(set_);
    throw;
  }
}

NvmlEventSet::~NvmlEventSet() {
  if (const NvmlApi* t = g_nvml_table.load(std::memory_order_acquire); t && t->nvmlEventSetFree && set_)
    t->nvmlEventSetFree(set_);  // nothing to report from a destructor
}

EventData NvmlEventSet::wait(unsigned timeout_ms) const {
  EventData data{};
  NANOCUDA_NVML_CALL(device_.describe(), nvmlEventSetWait_v2, set_, &data, timeout_ms);
  return data;
}

}  // namespace nanocuda::nvml
