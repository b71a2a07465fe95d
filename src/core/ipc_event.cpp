// Interprocess events.
#include "nanocuda/core/ipc_event.h"

#include <cstring>
#include <stdexcept>

#include "nanocuda/driver/check.h"

namespace nanocuda {

Event create_ipc_event(const Device& device, bool blocking_sync) {
  CurrentContext guard(*device.context());
  CUevent h = nullptr;
  NANOCUDA_CALL(cuEventCreate, [&] { return "interprocess event on device " + std::to_string(device.ordinal()); },
                &h, unsigned{CU_EVENT_INTERPROCESS} | unsigned{CU_EVENT_DISABLE_TIMING} |
                    (blocking_sync ? unsigned{CU_EVENT_BLOCKING_SYNC} : 0u));
  return Event(device, h, false, true, blocking_sync, /*recorded=*/false);
}

std::string export_ipc_event(const Event& event) {
  if (!event.is_interprocess())
    // A RuntimeError with cuda.core's words ("not IPC-enabled"): the event is fine, only not shareable.
    throw std::runtime_error("nanocuda::export_ipc_event: " + event.describe() +
                             " is not IPC-enabled (not interprocess); create it with nanocuda::create_ipc_event()");
  CUipcEventHandle handle{};
  CUevent h = event.checked_handle("nanocuda::export_ipc_event");
  if (event.is_imported()) return event.imported_handle();  // as opened: one descriptor per event
  // The driver wants a current context (a pickling thread often has none): the event's own.
  CurrentContext guard(*event.device().context());
  NANOCUDA_CALL(cuIpcGetEventHandle, [&] { return event.describe(); }, &handle, h);
  return std::string(handle.reserved, sizeof handle.reserved);
}

Event import_ipc_event(const Device& device, std::string_view bytes, bool blocking_sync) {
  CUipcEventHandle handle{};
  if (bytes.size() != sizeof handle.reserved)
    throw ValueError("nanocuda::import_ipc_event", "an event handle is " + std::to_string(sizeof handle.reserved) +
                     " bytes, got " + std::to_string(bytes.size()));
  std::memcpy(handle.reserved, bytes.data(), sizeof handle.reserved);
  CurrentContext guard(*device.context());
  CUevent h = nullptr;
  NANOCUDA_CALL(cuIpcOpenEventHandle,
                [&] { return "nanocuda::import_ipc_event on device " + std::to_string(device.ordinal()) +
                             ": not a live interprocess event of another process?"; },
                &h, handle);
  Event event(device, h, false, true, blocking_sync, /*recorded=*/true, /*imported=*/true);
  event.set_imported_handle(std::string(bytes));
  return event;
}

}  // namespace nanocuda
