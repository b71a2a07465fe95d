// System-wide NVML events: one nvmlSystemEventSet per SystemEventSet, registered at creation.
#include "nanocuda/nvml/nvml_system_events.h"

#include "nanocuda/driver/error.h"
#include "nanocuda/nvml/nvml_error.h"

namespace nanocuda::nvml {

using nanocuda::ValueError;

namespace {
constexpr const char* kObject = "system events";

void free_set(const NvmlApi& table, SystemEventSetHandle set) noexcept {
  if (!table.nvmlSystemEventSetFree || !set) return;
  SystemEventSetRequest_v1 request{struct_version<SystemEventSetRequest_v1>(1), set};
  table.nvmlSystemEventSetFree(&request);  // nothing to report from here
}
}  // namespace

SystemEventSet::SystemEventSet(unsigned long long event_types) {
  SystemEventSetRequest_v1 create{struct_version<SystemEventSetRequest_v1>(1), nullptr};
  NANOCUDA_NVML_CALL(kObject, nvmlSystemEventSetCreate, &create);
  set_ = create.set;
  try {
    SystemRegisterEventRequest_v1 reg{struct_version<SystemRegisterEventRequest_v1>(1), event_types, set_};
    NANOCUDA_NVML_CALL(kObject, nvmlSystemRegisterEvents, &reg);
  } catch (...) {
    free_set(api(), set_);
    set_ = nullptr;
    throw;
  }
}

SystemEventSet::~SystemEventSet() {
  if (const NvmlApi* t = g_nvml_table.load(std::memory_order_acquire)) free_set(*t, set_);
}

std::vector<SystemEvent> SystemEventSet::wait(unsigned timeout_ms, unsigned buffer_size) const {
  if (buffer_size == 0) throw ValueError("SystemEventSet::wait", "buffer_size must be at least 1");
  std::vector<SystemEventData_v1> data(buffer_size);
  SystemEventSetWaitRequest_v1 request{struct_version<SystemEventSetWaitRequest_v1>(1), timeout_ms, set_,
                                       data.data(), buffer_size, 0};
  NANOCUDA_NVML_CALL(kObject, nvmlSystemEventSetWait, &request);
  std::vector<SystemEvent> out;
  for (unsigned i = 0; i < request.num_event && i < buffer_size; ++i)
    out.push_back(SystemEvent{data[i].event_type, data[i].gpu_id});
  return out;
}

}  // namespace nanocuda::nvml
