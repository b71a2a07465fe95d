// Events: recording, waiting and timing.
#include "nanocuda/core/event.h"

#include <cstdio>
#include <stdexcept>

#include "device_wait.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

namespace detail {
void destroy_event(CUevent event) noexcept {
  const auto* api = loaded_driver();
  if (!api) return;
  if (CUresult rc = api->cuEventDestroy(event); rc != CUDA_SUCCESS)
    record_deferred_error(rc, "cuEventDestroy", "Event");
}
}  // namespace detail

Event::Event(const Device& device, bool timing, bool blocking_sync)
    : Event(device, *device.context(), timing, blocking_sync) {}

Event::Event(const Device& device, const Context& context, bool timing, bool blocking_sync)
    : device_(device),
      context_(context.handle() == device.context()->handle() ? device.context() : std::make_shared<Context>(context)),
      timing_(timing),
      blocking_sync_(blocking_sync) {
  CurrentContext guard(*context_);
  unsigned flags = (timing ? 0u : unsigned{CU_EVENT_DISABLE_TIMING}) |
                   (blocking_sync ? unsigned{CU_EVENT_BLOCKING_SYNC} : 0u);
  CUevent h = nullptr;
  NANOCUDA_CALL(cuEventCreate, [&] { return "new event on device " + std::to_string(device.ordinal()); },
                &h, flags);
  handle_.reset(h);
}

Event::Event(const Device& device, CUevent handle, bool timing, bool interprocess, bool blocking_sync,
             bool recorded, bool imported)
    : device_(device), context_(device.context()), handle_(handle), timing_(timing),
      interprocess_(interprocess), blocking_sync_(blocking_sync), imported_(imported), recorded_(recorded) {}

CUevent Event::checked_handle(const char* call) const {
  if (!handle_) [[unlikely]]
    throw ValueError(std::string(call), describe() + " is closed (close() was called); make a new Event");
  return handle_.get();
}

void Event::close() noexcept {
  // Destroying an event still pending is allowed: the driver frees it once it completes.
  handle_.reset();
}

void Event::record(StreamRef stream) {
  CUevent h = checked_handle("Event::record");
  // Another process may be waiting on what this event marks (cuda.core's rule and words).
  if (interprocess_ && recorded_) [[unlikely]]
    throw TypeError("IPC-enabled events should not be re-recorded, instead create a new event by supplying options.");
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuEventRecord, [&] { return describe() + " on " + stream.describe(); },
                h, stream.handle());
  recorded_ = true;
}

void Event::sync() const {
  detail::DeviceWait wait;
  NANOCUDA_CALL(cuEventSynchronize, [&] { return describe(); }, checked_handle("Event::sync"));
}

bool Event::query() const {
  CUresult rc = detail::driver().cuEventQuery(checked_handle("Event::query"));
  if (rc == CUDA_ERROR_NOT_READY) return false;
  detail::check(rc, "cuEventQuery", [&] { return describe(); });
  return true;
}

// The three refusals are RuntimeErrors opening with cuda.core's words (its users match on
// them), followed by nanocuda's naming of the event and the remedy.
float Event::elapsed_time_since(const Event& start) const {
  if (!timing_ || !start.timing_)
    throw std::runtime_error("Both Events must be created with timing enabled (Event::elapsed_time_since: " +
                             (timing_ ? start.describe() : describe()) +
                             " has timing disabled; create it with timing enabled)");
  CUevent from = start.checked_handle("Event::elapsed_time_since (start)");
  CUevent to = checked_handle("Event::elapsed_time_since (end)");
  // The driver says INVALID_HANDLE for an event never recorded: name the event and the rule.
  if (!start.recorded_ || !recorded_)
    throw std::runtime_error("Both Events must be recorded before their elapsed time is read (Event::elapsed_time_since: the " +
                             std::string(!start.recorded_ ? "start " : "end ") +
                             (!start.recorded_ ? start.describe() : describe()) +
                             " was never recorded; record both events on a stream (Stream::record(event)) first)");
  float ms = 0;
  CUresult rc = detail::driver().cuEventElapsedTime(&ms, from, to);
  if (rc == CUDA_ERROR_NOT_READY)
    throw std::runtime_error("One or both events have not completed. (Event::elapsed_time_since from " + start.describe() +
                             " to " + describe() + ": sync the end event, or its stream, first)");
  detail::check(rc, "cuEventElapsedTime", [&] { return "from " + start.describe() + " to " + describe(); });
  return ms;
}

std::string Event::describe() const {
  char text[96];
  if (!handle_)
    std::snprintf(text, sizeof text, "Event (closed) on device %d", device_.ordinal());
  else
    std::snprintf(text, sizeof text, "Event %p on device %d", static_cast<void*>(handle_.get()),
                  device_.ordinal());
  return text;
}

}  // namespace nanocuda
