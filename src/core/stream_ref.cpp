// StreamRef: a non-owning stream view; the work itself goes through Stream.
#include "nanocuda/core/stream_ref.h"

#include <cstdio>

#include "nanocuda/core/event.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

StreamRef::StreamRef(const Stream& stream) noexcept
    : stream_(&stream), handle_(stream.raw_handle()), device_ordinal_(stream.device().ordinal()) {}

StreamRef::StreamRef(CUstream handle, const Device& device) noexcept
    : handle_(handle), device_ordinal_(device.ordinal()) {}

CUstream StreamRef::handle() const {
  if (stream_ && stream_->is_closed())
    throw ValueError("StreamRef::handle", stream_->describe() + " is closed; the view outlived its stream's use");
  return handle_;
}

bool StreamRef::views_owned_stream() const noexcept { return stream_ && stream_->is_owned(); }

Stream StreamRef::stream() const {
  if (stream_) return *stream_;
  return Stream::borrow(handle_, device_ordinal_);
}

void StreamRef::sync() const { stream().sync(); }
bool StreamRef::query() const { return stream().query(); }
void StreamRef::wait(const Event& event) const { stream().wait(event); }
void StreamRef::record(const Event& event) const { stream().record(event); }

std::string StreamRef::describe() const {
  if (stream_) return "view of " + stream_->describe();
  char text[96];
  std::snprintf(text, sizeof text, "Stream %p (a view, not owned) on device %d", static_cast<void*>(handle_),
                device_ordinal_);
  return text;
}

}  // namespace nanocuda
