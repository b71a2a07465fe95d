// The per-device resource table behind Device.memory_resource, and size formatting.
#include "nanocuda/core/memory_resource.h"

#include <cstdio>
#include <mutex>
#include <vector>

#include "nanocuda/core/device.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {
std::mutex g_mutex;
// Index: device ordinal. Entries stay for the process (like primary contexts).
std::vector<std::shared_ptr<MemoryResource>> g_resources;
}  // namespace

std::shared_ptr<MemoryResource> MemoryResource::for_device(const Device& device) {
  std::lock_guard lock(g_mutex);
  auto i = static_cast<std::size_t>(device.ordinal());
  if (g_resources.size() <= i) g_resources.resize(i + 1);
  if (!g_resources[i]) g_resources[i] = std::make_shared<DeviceMemoryResource>(device);
  return g_resources[i];
}

void MemoryResource::set_for_device(const Device& device, std::shared_ptr<MemoryResource> resource) {
  if (resource && (!resource->is_device_accessible() || resource->device_id() != device.ordinal()))
    throw ValueError("MemoryResource::set_for_device", resource->describe() + " (device_id " +
                     std::to_string(resource->device_id()) + ") cannot serve device " +
                     std::to_string(device.ordinal()) +
                     "; it must allocate device-accessible memory of that device");
  std::lock_guard lock(g_mutex);
  auto i = static_cast<std::size_t>(device.ordinal());
  if (g_resources.size() <= i) g_resources.resize(i + 1);
  g_resources[i] = resource ? std::move(resource) : std::make_shared<DeviceMemoryResource>(device);
}

std::string format_bytes(unsigned long long bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
  char text[48];
  if (u == 0) std::snprintf(text, sizeof text, "%llu bytes", bytes);
  else std::snprintf(text, sizeof text, "%.4g %s", v, units[u]);
  return text;
}

}  // namespace nanocuda
