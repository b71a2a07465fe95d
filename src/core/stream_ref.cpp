// StreamRef: the non-owning stream view every queuing API takes; the stream operations live here.
#include "nanocuda/core/stream_ref.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nanocuda/core/event.h"
#include "device_wait.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

// The stand-in state of device `device`'s foreign streams: made once per device, never freed
// (as primary contexts; reachable from the tables, so no leak report), never closed, never
// destroys anything, and never shared (StreamRef::state() hides it).
Stream::State* foreign_state(const Device& device) {
  constexpr int kSlots = 64;
  static std::atomic<Stream::State*> slots[kSlots];  // lock-free reads for the common devices
  static std::mutex mutex;
  static auto* more = new std::vector<Stream::State*>();  // ordinals past kSlots
  const int ordinal = device.ordinal();
  const bool slotted = ordinal >= 0 && ordinal < kSlots;
  if (slotted) [[likely]]
    if (Stream::State* s = slots[ordinal].load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(mutex);
  auto make = [&] {
    auto* s = new Stream::State(nullptr, device);
    s->foreign = true;
    return s;
  };
  if (slotted) {
    if (Stream::State* s = slots[ordinal].load(std::memory_order_relaxed)) return s;
    Stream::State* s = make();
    slots[ordinal].store(s, std::memory_order_release);
    return s;
  }
  if (more->size() <= static_cast<std::size_t>(ordinal)) more->resize(static_cast<std::size_t>(ordinal) + 1, nullptr);
  Stream::State*& s = (*more)[static_cast<std::size_t>(ordinal)];
  if (!s) s = make();
  return s;
}

}  // namespace

StreamRef::StreamRef(CUstream handle, const Device& device) : handle_(handle), state_(foreign_state(device)) {}

StreamRef StreamRef::from_handle(CUstream handle, int device_ordinal) {
  if (device_ordinal >= 0) return StreamRef(handle, Device(device_ordinal));
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD)
    return StreamRef(handle, Device());  // the default-device rule
  // The stream's own context tells its device; cuCtxGetDevice reads the current one.
  auto what = [&] {
    char text[64];
    std::snprintf(text, sizeof text, "Stream %p (foreign)", static_cast<void*>(handle));
    return std::string(text);
  };
  CUcontext ctx = nullptr, previous = nullptr;
  NANOCUDA_CALL(cuStreamGetCtx, what, handle, &ctx);
  NANOCUDA_CALL(cuCtxGetCurrent, what, &previous);
  NANOCUDA_CALL(cuCtxSetCurrent, what, ctx);
  CUdevice dev = 0;
  CUresult rc = detail::driver().cuCtxGetDevice(&dev);
  detail::driver().cuCtxSetCurrent(previous);
  detail::check(rc, "cuCtxGetDevice", what);
  return StreamRef(handle, Device(static_cast<int>(dev)));  // CUdevice is the ordinal
}

void StreamRef::throw_closed() const {
  throw ValueError("StreamRef::handle", describe() + ": the stream is closed; a view must not outlive its stream's use");
}

int StreamRef::priority() const {
  int p = 0;
  NANOCUDA_CALL(cuStreamGetPriority, [&] { return describe(); }, handle(), &p);
  return p;
}

bool StreamRef::is_non_blocking() const {
  unsigned int flags = 0;
  NANOCUDA_CALL(cuStreamGetFlags, [&] { return describe(); }, handle(), &flags);
  return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

void StreamRef::sync() const {
  detail::DeviceWait wait;
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

std::string StreamRef::describe() const {
  if (state()) return Stream(state()->shared_from_this()).describe();
  char text[96];
  std::snprintf(text, sizeof text, "Stream %p (foreign, not owned) on device %d", static_cast<void*>(handle_),
                device_ordinal());
  return text;
}

}  // namespace nanocuda
