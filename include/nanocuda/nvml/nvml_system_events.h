// System-wide NVML events (GPU driver bind/unbind): cuda.core's system.register_events.
#pragma once

#include <vector>

#include "nanocuda/nvml/nvml_api.h"

namespace nanocuda::nvml {

// nvmlSystemEventType*: the bits register takes and events carry.
constexpr unsigned long long kSystemEventUnbind = 0x1;
constexpr unsigned long long kSystemEventBind = 0x2;

struct SystemEvent {
  unsigned long long event_type;  // one kSystemEvent* bit
  unsigned gpu_id;                // the GPU's PCI id, packed (domain, bus, device)
};

// An NVML system event set recording `event_types` (kSystemEvent* bits) from now on. Throws
// NvmlError: NOT_SUPPORTED when none of them can be registered, FUNCTION_NOT_FOUND from an
// NVML without system events. The set is freed with the object (never throws there).
class SystemEventSet {
 public:
  explicit SystemEventSet(unsigned long long event_types);
  ~SystemEventSet();
  SystemEventSet(const SystemEventSet&) = delete;
  SystemEventSet& operator=(const SystemEventSet&) = delete;

  // Up to `buffer_size` (>= 1) events; waits at most `timeout_ms` (0: no limit) for the
  // first. NvmlError TIMEOUT when none came.
  [[nodiscard]] std::vector<SystemEvent> wait(unsigned timeout_ms, unsigned buffer_size) const;

 private:
  SystemEventSetHandle set_ = nullptr;
};

}  // namespace nanocuda::nvml
