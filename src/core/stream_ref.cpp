// StreamRef: the non-owning stream view every queuing API takes; the stream operations live here.
#include "nanocuda/core/stream_ref.h"

#include <cstdio>

#include "nanocuda/core/event.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

StreamRef::StreamRef(CUstream handle, const Device& device)
    : handle_(handle), context_(device.context().get()), device_ordinal_(device.ordinal()) {}

void StreamRef::throw_closed() const {
  throw ValueError("StreamRef::handle", describe() + ": the stream is closed; a view must not outlive its stream's use");
}

Device StreamRef::device() const { return state_ ? state_->device : Device(device_ordinal_); }

void StreamRef::sync() const {
  CurrentContext guard(context());
  NANOCUDA_CALL(cuStreamSynchronize, [&] { return describe(); }, handle());
}

bool StreamRef::query() const {
  CurrentContext guard(context());
  CUresult rc = detail::driver().cuStreamQuery(handle());
  if (rc == CUDA_ERROR_NOT_READY) return false;
  detail::check(rc, "cuStreamQuery", [&] { return describe(); });
  return true;
}

void StreamRef::wait(const Event& event) const {
  CurrentContext guard(context());
  NANOCUDA_CALL(cuStreamWaitEvent, [&] { return describe() + ", waiting on " + event.describe(); }, handle(),
                event.checked_handle("Stream::wait"), 0);
}

void StreamRef::wait(StreamRef other) const {
  Event marker(other.device(), /*timing=*/false);
  marker.record(other);
  wait(marker);
}

void StreamRef::record(const Event& event) const { const_cast<Event&>(event).record(*this); }

Event StreamRef::record(bool timing) const {
  Event event(device(), context(), timing);  // in the stream's context (a green one's too)
  event.record(*this);
  return event;
}

Stream StreamRef::stream() const {
  if (state_) return Stream(state_->shared_from_this());
  return Stream::borrow(handle_, device_ordinal_);
}

std::string StreamRef::describe() const {
  if (state_) return Stream(state_->shared_from_this()).describe();
  char text[96];
  std::snprintf(text, sizeof text, "Stream %p (foreign, not owned) on device %d", static_cast<void*>(handle_),
                device_ordinal_);
  return text;
}

}  // namespace nanocuda
