// The per-device resource table behind Device.memory_resource, and size formatting.
#include "nanocuda/core/memory_resource.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <type_traits>
#include <vector>

#include "nanocuda/core/device.h"
#include "nanocuda/core/device_memory_resource.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {
std::mutex g_mutex;
// Index: device ordinal. Entries stay for the process (like primary contexts).
std::vector<std::shared_ptr<MemoryResource>> g_resources;
// Bumped (under g_mutex) by every replacement of an entry, so a thread's cached answer is
// known current without the lock. A first fill needs no bump: no cache holds that entry yet.
std::atomic<std::uint64_t> g_version{1};
}  // namespace

// The version check and a weak_ptr lock (one atomic operation) instead of the lock, unlock and
// shared_ptr copy (three, and ~100 instructions); a lock() that fails (the entry replaced and
// destroyed meanwhile) falls back to the table.
std::shared_ptr<MemoryResource> MemoryResource::for_device(const Device& device, DeviceCache& cache) {
  auto i = static_cast<std::size_t>(device.ordinal());
  constexpr std::size_t cached = std::extent_v<decltype(DeviceCache::resource)>;
  if (i < cached && cache.version == g_version.load(std::memory_order_acquire))
    if (auto mr = cache.resource[i].lock()) return mr;
  std::lock_guard lock(g_mutex);
  if (g_resources.size() <= i) g_resources.resize(i + 1);
  if (!g_resources[i]) g_resources[i] = std::make_shared<DeviceMemoryResource>(device);
  if (i < cached) {
    std::uint64_t version = g_version.load(std::memory_order_relaxed);
    if (cache.version != version) cache = DeviceCache{version, {}};
    cache.resource[i] = g_resources[i];
  }
  return g_resources[i];
}

std::shared_ptr<MemoryResource> MemoryResource::for_device(const Device& device) {
  thread_local DeviceCache cache;
  return for_device(device, cache);
}

void MemoryResource::set_for_device(const Device& device, std::shared_ptr<MemoryResource> resource) {
  if (resource && (!resource->is_device_accessible() || resource->device_id() != device.ordinal()))
    throw ValueError("MemoryResource::set_for_device", resource->describe() + " (device_id " +
                     std::to_string(resource->device_id()) + ") cannot serve device " +
                     std::to_string(device.ordinal()) +
                     "; it must allocate device-accessible memory of that device");
  std::unique_lock lock(g_mutex);
  auto i = static_cast<std::size_t>(device.ordinal());
  if (g_resources.size() <= i) g_resources.resize(i + 1);
  // The previous entry is released after the unlock (its destructor may call back here).
  std::shared_ptr<MemoryResource> previous = std::move(g_resources[i]);
  g_resources[i] = resource ? std::move(resource) : std::make_shared<DeviceMemoryResource>(device);
  g_version.fetch_add(1, std::memory_order_release);
  lock.unlock();
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
