// The one list of NVML entry points nanocuda uses, and the lazily filled table of them.
//
// The toolkit ships no nvml.h, so the few types NVML's ABI needs are declared here (from
// NVML's public API reference; layouts are fixed by the versioned names). libnvidia-ml.so.1
// is dlopen'ed on first use, never at import, and nvmlInit_v2 runs once. An entry point the
// installed library lacks stays null, and its checked call raises FUNCTION_NOT_FOUND naming it.
#pragma once

#include <atomic>

namespace nanocuda::nvml {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
constexpr Return kErrorNotSupported = 3;
constexpr Return kErrorNotFound = 6;
constexpr Return kErrorInsufficientSize = 7;
constexpr Return kErrorTimeout = 10;
constexpr Return kErrorLibraryNotFound = 12;
constexpr Return kErrorFunctionNotFound = 13;

struct DeviceSt;
using DeviceHandle = DeviceSt*;  // nvmlDevice_t: owned by the library, valid until shutdown
struct EventSetSt;
using EventSetHandle = EventSetSt*;  // nvmlEventSet_t

// NVML_STRUCT_VERSION: the size of a versioned struct with the version in the top byte.
template <class T>
constexpr unsigned struct_version(unsigned v) {
  return static_cast<unsigned>(sizeof(T)) | (v << 24U);
}

struct Memory_v2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
struct BAR1Memory {
  unsigned long long total, free, used;
};
struct PciInfoExt_v1 {
  unsigned version, domain, bus, device, pci_device_id, pci_subsystem_id, base_class, sub_class;
  char bus_id[32];
};
struct Utilization {
  unsigned gpu, memory;
};
struct ProcessInfo_v2 {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
struct C2cModeInfo_v1 {
  unsigned is_c2c_enabled;
};
struct AddressingMode_v1 {
  unsigned version, value;
};
struct RepairStatus_v1 {
  unsigned version, channel_repair_pending, tpc_repair_pending;
};
struct DriverBranchInfo_v1 {
  unsigned version;
  char branch[80];
};
struct DynamicPstatesInfo {
  unsigned flags;
  struct {
    unsigned is_present, percentage, inc_threshold, dec_threshold;
  } utilization[8];
};
struct FieldValue {  // nvmlFieldValue_t
  unsigned field_id, scope_id;
  long long timestamp, latency_usec;
  int value_type;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 int, 6 ushort
  Return nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value;
};
struct EventData {
  DeviceHandle device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance_id, compute_instance_id;
};
// System events (GPU driver bind/unbind; NVML of r575+ drivers): nvmlSystemEventSet_t and
// the versioned requests its four calls take.
struct SystemEventSetSt;
using SystemEventSetHandle = SystemEventSetSt*;
struct SystemEventSetRequest_v1 {  // nvmlSystemEventSetCreateRequest_v1_t and ...FreeRequest_v1_t
  unsigned version;
  SystemEventSetHandle set;
};
struct SystemRegisterEventRequest_v1 {
  unsigned version;
  unsigned long long event_types;
  SystemEventSetHandle set;
};
struct SystemEventData_v1 {
  unsigned long long event_type;
  unsigned gpu_id;
};
struct SystemEventSetWaitRequest_v1 {
  unsigned version, timeout_ms;
  SystemEventSetHandle set;
  SystemEventData_v1* data;
  unsigned data_size, num_event;
};

// X(name, parameter list): every entry point returns nvmlReturn_t.
#define NANOCUDA_NVML_ENTRY_POINTS(X)                                                         \
  X(nvmlInit_v2, (void))                                                                      \
  X(nvmlSystemGetDriverVersion, (char*, unsigned))                                            \
  X(nvmlSystemGetNVMLVersion, (char*, unsigned))                                              \
  X(nvmlSystemGetCudaDriverVersion_v2, (int*))                                                \
  X(nvmlSystemGetProcessName, (unsigned, char*, unsigned))                                    \
  X(nvmlSystemGetDriverBranch, (DriverBranchInfo_v1*, unsigned))                              \
  X(nvmlSystemGetTopologyGpuSet, (unsigned, unsigned*, DeviceHandle*))                        \
  X(nvmlDeviceGetCount_v2, (unsigned*))                                                       \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned, DeviceHandle*))                                 \
  X(nvmlDeviceGetHandleByUUID, (const char*, DeviceHandle*))                                  \
  X(nvmlDeviceGetHandleByPciBusId_v2, (const char*, DeviceHandle*))                           \
  X(nvmlDeviceGetIndex, (DeviceHandle, unsigned*))                                            \
  X(nvmlDeviceGetName, (DeviceHandle, char*, unsigned))                                       \
  X(nvmlDeviceGetUUID, (DeviceHandle, char*, unsigned))                                       \
  X(nvmlDeviceGetSerial, (DeviceHandle, char*, unsigned))                                     \
  X(nvmlDeviceGetBrand, (DeviceHandle, int*))                                                 \
  X(nvmlDeviceGetArchitecture, (DeviceHandle, unsigned*))                                     \
  X(nvmlDeviceGetMinorNumber, (DeviceHandle, unsigned*))                                      \
  X(nvmlDeviceGetModuleId, (DeviceHandle, unsigned*))                                         \
  X(nvmlDeviceGetCudaComputeCapability, (DeviceHandle, int*, int*))                           \
  X(nvmlDeviceGetMemoryInfo_v2, (DeviceHandle, Memory_v2*))                                   \
  X(nvmlDeviceGetBAR1MemoryInfo, (DeviceHandle, BAR1Memory*))                                 \
  X(nvmlDeviceGetPciInfoExt, (DeviceHandle, PciInfoExt_v1*))                                  \
  X(nvmlDeviceGetMaxPcieLinkGeneration, (DeviceHandle, unsigned*))                            \
  X(nvmlDeviceGetGpuMaxPcieLinkGeneration, (DeviceHandle, unsigned*))                         \
  X(nvmlDeviceGetMaxPcieLinkWidth, (DeviceHandle, unsigned*))                                 \
  X(nvmlDeviceGetCurrPcieLinkGeneration, (DeviceHandle, unsigned*))                           \
  X(nvmlDeviceGetCurrPcieLinkWidth, (DeviceHandle, unsigned*))                                \
  X(nvmlDeviceGetPcieThroughput, (DeviceHandle, int, unsigned*))                              \
  X(nvmlDeviceGetPcieReplayCounter, (DeviceHandle, unsigned*))                                \
  X(nvmlDeviceGetCpuAffinityWithinScope, (DeviceHandle, unsigned, unsigned long*, int))       \
  X(nvmlDeviceGetMemoryAffinity, (DeviceHandle, unsigned, unsigned long*, int))               \
  X(nvmlDeviceGetNumaNodeId, (DeviceHandle, unsigned*))                                       \
  X(nvmlDeviceGetPersistenceMode, (DeviceHandle, int*))                                       \
  X(nvmlDeviceSetPersistenceMode, (DeviceHandle, int))                                        \
  X(nvmlDeviceGetDisplayMode, (DeviceHandle, int*))                                           \
  X(nvmlDeviceGetDisplayActive, (DeviceHandle, int*))                                         \
  X(nvmlDeviceGetC2cModeInfoV, (DeviceHandle, C2cModeInfo_v1*))                               \
  X(nvmlDeviceGetAddressingMode, (DeviceHandle, AddressingMode_v1*))                          \
  X(nvmlDeviceGetRepairStatus, (DeviceHandle, RepairStatus_v1*))                              \
  X(nvmlDeviceGetPerformanceState, (DeviceHandle, int*))                                      \
  X(nvmlDeviceGetSupportedPerformanceStates, (DeviceHandle, int*, unsigned))                  \
  X(nvmlDeviceGetDynamicPstatesInfo, (DeviceHandle, DynamicPstatesInfo*))                     \
  X(nvmlDeviceGetUtilizationRates, (DeviceHandle, Utilization*))                              \
  X(nvmlDeviceGetCurrentClocksEventReasons, (DeviceHandle, unsigned long long*))              \
  X(nvmlDeviceGetSupportedClocksEventReasons, (DeviceHandle, unsigned long long*))            \
  X(nvmlDeviceGetComputeRunningProcesses_v3, (DeviceHandle, unsigned*, ProcessInfo_v2*))      \
  X(nvmlDeviceIsMigDeviceHandle, (DeviceHandle, unsigned*))                                   \
  X(nvmlDeviceGetMigMode, (DeviceHandle, unsigned*, unsigned*))                               \
  X(nvmlDeviceGetMaxMigDeviceCount, (DeviceHandle, unsigned*))                                \
  X(nvmlDeviceGetMigDeviceHandleByIndex, (DeviceHandle, unsigned, DeviceHandle*))             \
  X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, (DeviceHandle, DeviceHandle*))              \
  X(nvmlDeviceGetTopologyNearestGpus, (DeviceHandle, int, unsigned*, DeviceHandle*))          \
  X(nvmlDeviceGetNvLinkState, (DeviceHandle, unsigned, int*))                                \
  X(nvmlDeviceGetNvLinkVersion, (DeviceHandle, unsigned, unsigned*))                          \
  X(nvmlDeviceGetInforomImageVersion, (DeviceHandle, char*, unsigned))                       \
  X(nvmlDeviceGetInforomVersion, (DeviceHandle, int, char*, unsigned))                        \
  X(nvmlDeviceGetInforomConfigurationChecksum, (DeviceHandle, unsigned*))                     \
  X(nvmlDeviceValidateInforom, (DeviceHandle))                                                \
  X(nvmlDeviceGetLastBBXFlushTime, (DeviceHandle, unsigned long long*, unsigned long*))       \
  X(nvmlDeviceGetBoardPartNumber, (DeviceHandle, char*, unsigned))                            \
  X(nvmlDeviceGetFieldValues, (DeviceHandle, int, FieldValue*))                              \
  X(nvmlDeviceClearFieldValues, (DeviceHandle, int, FieldValue*))                            \
  X(nvmlDeviceGetSupportedEventTypes, (DeviceHandle, unsigned long long*))                    \
  X(nvmlDeviceRegisterEvents, (DeviceHandle, unsigned long long, EventSetHandle))             \
  X(nvmlEventSetCreate, (EventSetHandle*))                                                    \
  X(nvmlEventSetWait_v2, (EventSetHandle, EventData*, unsigned))                              \
  X(nvmlEventSetFree, (EventSetHandle))                                                       \
  X(nvmlSystemEventSetCreate, (SystemEventSetRequest_v1*))                                    \
  X(nvmlSystemRegisterEvents, (SystemRegisterEventRequest_v1*))                               \
  X(nvmlSystemEventSetWait, (SystemEventSetWaitRequest_v1*))                                  \
  X(nvmlSystemEventSetFree, (SystemEventSetRequest_v1*))

// One typed pointer per entry point (null where the library lacks it), plus nvmlErrorString.
struct NvmlApi {
#define NANOCUDA_NVML_DECLARE(name, params) Return(*name) params = nullptr;
  NANOCUDA_NVML_ENTRY_POINTS(NANOCUDA_NVML_DECLARE)
#undef NANOCUDA_NVML_DECLARE
  const char* (*nvmlErrorString)(Return) = nullptr;
};

// Loads libnvidia-ml.so.1 (or $NANOCUDA_LIBNVML) and runs nvmlInit_v2, once per process and
// thread-safely. Throws NvmlError (LIBRARY_NOT_FOUND when there is no library); the failure
// is remembered, so later calls fail fast with the same message.
const NvmlApi& load_nvml();

extern std::atomic<const NvmlApi*> g_nvml_table;

// The table, loading it on first use.
inline const NvmlApi& api() {
  if (const NvmlApi* table = g_nvml_table.load(std::memory_order_acquire)) [[likely]] return *table;
  return load_nvml();
}

// 0: not tried yet, 1: loaded and initialized, 2: the library or its init failed
// (cuda.core's _nvml_context states). Never loads anything.
[[nodiscard]] int state() noexcept;

// Forgets the table and any remembered failure, so the next call loads again (tests point
// $NANOCUDA_LIBNVML at a mock library; the library itself stays loaded).
void reset_for_testing() noexcept;

}  // namespace nanocuda::nvml
