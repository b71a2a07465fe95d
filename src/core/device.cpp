// Device identity and attributes, read through the driver table.
#include "nanocuda/core/device.h"

#include <cstdio>
#include <string>

#include "device_wait.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/driver_version.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

// The attributes that are yes/no answers (0 or 1), which cuda.core's DeviceProperties gives as bool.
constexpr CUdevice_attribute kFlagAttributes[] = {
    CU_DEVICE_ATTRIBUTE_GPU_OVERLAP,
    CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT,
    CU_DEVICE_ATTRIBUTE_INTEGRATED,
    CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS,
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED,
    CU_DEVICE_ATTRIBUTE_TCC_DRIVER,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
    CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD,
    CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
    CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
    CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST,
    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER,
    CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES,
    CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH,
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR,
    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS,
    CU_DEVICE_ATTRIBUTE_MPS_ENABLED,
    CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED};

constexpr bool is_flag(CUdevice_attribute a) {
  for (CUdevice_attribute f : kFlagAttributes)
    if (f == a) return true;
  return false;
}

constexpr DeviceAttributeInfo kAttributes[] = {
#define X(enum_name, value, snake_name, doc) {enum_name, #snake_name, doc, is_flag(enum_name)},
#include "nanocuda/core/device_attributes.inc"
#undef X
};

std::string device_text(int ordinal) { return "Device(" + std::to_string(ordinal) + ")"; }

}  // namespace

const DeviceAttributeInfo* device_attributes(std::size_t* count) noexcept {
  *count = sizeof(kAttributes) / sizeof(kAttributes[0]);
  return kAttributes;
}

int Device::count() {
  int n = 0;
  NANOCUDA_CALL(cuDeviceGetCount, "", &n);
  return n;
}

int Device::driver_version() {
  // Without cuInit or the table, so a driver older than nanocuda's floor still answers
  // (`nanocuda info` shows it); no driver at all raises the loader's DriverNotFoundError.
  if (int v = detail::installed_driver_version()) return v;
  int v = 0;
  NANOCUDA_CALL(cuDriverGetVersion, "", &v);
  return v;
}

int Device::current_ordinal() {
  const auto& api = detail::driver();
  CUcontext ctx = nullptr;
  if (api.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr) return 0;
  CUdevice dev = 0;
  detail::check(api.cuCtxGetDevice(&dev), "cuCtxGetDevice", "Device()");
  for (int i = 0, n = count(); i < n; ++i)
    if (Device(i).handle() == dev) return i;
  return 0;
}

Device::Device() : Device(current_ordinal()) {}

Device::Device(int ordinal) : ordinal_(ordinal) {
  int n = count();
  if (ordinal < 0 || ordinal >= n)
    throw ValueError("Device(" + std::to_string(ordinal) + "): no such device; this machine has " +
                     std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s"));
  NANOCUDA_CALL(cuDeviceGet, [&] { return device_text(ordinal); }, &handle_, ordinal);
}

std::string Device::name() const {
  char buf[256] = {};
  NANOCUDA_CALL(cuDeviceGetName, [&] { return device_text(ordinal_); }, buf, sizeof buf - 1,
                handle_);
  return buf;
}

std::array<unsigned char, 16> Device::uuid() const {
  CUuuid id{};
  NANOCUDA_CALL(cuDeviceGetUuid, [&] { return device_text(ordinal_); }, &id, handle_);
  std::array<unsigned char, 16> out{};
  for (int i = 0; i < 16; ++i) out[i] = static_cast<unsigned char>(id.bytes[i]);
  return out;
}

std::string Device::uuid_string(bool nvidia_smi_prefix) const {
  auto b = uuid();
  char text[64];
  std::snprintf(text, sizeof text,
                "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                nvidia_smi_prefix ? "GPU-" : "", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

std::string Device::pci_bus_id_text() const {
  char buf[32] = {};
  NANOCUDA_CALL(cuDeviceGetPCIBusId, [&] { return device_text(ordinal_); }, buf, static_cast<int>(sizeof buf - 1),
                handle_);
  return std::string(buf).substr(0, 12);  // the driver may add a function suffix beyond "dddd:bb:dd.f"
}

std::pair<int, int> Device::compute_capability() const {
  return {compute_capability_major(), compute_capability_minor()};
}

std::string Device::arch() const {
  auto [major, minor] = compute_capability();
  return std::to_string(major * 10 + minor);
}

std::string Device::target_arch() const {
  auto [major, minor] = compute_capability();
  // From sm_90 on, the arch-specific ("a") target unlocks wgmma, setmaxnreg and TMA
  // multicast; code built for it runs only on that exact major.minor, which is this device.
  return std::to_string(major * 10 + minor) + (major >= 9 ? "a" : "");
}

std::size_t Device::total_memory() const {
  std::size_t bytes = 0;
  NANOCUDA_CALL(cuDeviceTotalMem, [&] { return device_text(ordinal_); }, &bytes, handle_);
  return bytes;
}

std::pair<std::size_t, std::size_t> Device::memory_info() const {
  CurrentContext guard(*context());
  std::size_t free_bytes = 0, total = 0;
  NANOCUDA_CALL(cuMemGetInfo, [&] { return device_text(ordinal_); }, &free_bytes, &total);
  return {free_bytes, total};
}

int Device::attribute(CUdevice_attribute attr) const {
  int value = 0;
  NANOCUDA_CALL(cuDeviceGetAttribute,
                [&] { return device_text(ordinal_) + ", attribute " + std::to_string(attr); },
                &value, attr, handle_);
  return value;
}

const std::shared_ptr<Context>& Device::context() const {
  if (!context_) context_ = Context::primary(ordinal_);
  return context_;
}

void Device::set_current() const { context()->set_current(); }

std::optional<Context> Device::push_context(const Context& ctx) const {
  auto what = [&] { return "Device::push_context(ctx) on device " + std::to_string(ordinal_); };
  if (ctx.device_ordinal() != ordinal_)
    throw ValueError(what() + ": the context belongs to device " + std::to_string(ctx.device_ordinal()) +
                     "; pass a context of this device");
  if (ctx.is_closed()) throw ValueError(what() + ": the green context is closed");
  CUcontext current = nullptr;
  NANOCUDA_CALL(cuCtxGetCurrent, what, &current);
  std::optional<Context> popped;
  if (current) {
    CUdevice dev = 0;  // the popped context's device, read while it is still current
    NANOCUDA_CALL(cuCtxGetDevice, what, &dev);
    CUcontext out = nullptr;
    NANOCUDA_CALL(cuCtxPopCurrent, what, &out);
    // Only this device's primary is compared: looking up another would retain it.
    if (dev == ordinal_ && out == context()->handle()) popped = *context();
    else popped = Context(out, static_cast<int>(dev));
  }
  NANOCUDA_CALL(cuCtxPushCurrent, what, ctx.handle());
  detail::forget_launch_switch();
  return popped;
}

void Device::sync() const {
  detail::DeviceWait wait;
  CurrentContext guard(*context());
  NANOCUDA_CALL(cuCtxSynchronize, [&] { return device_text(ordinal_); });
}

}  // namespace nanocuda
