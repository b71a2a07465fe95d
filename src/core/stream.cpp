// Streams nanocuda owns: creation, ordering and closing.
#include "nanocuda/core/stream.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "nanocuda/driver/check.h"
#include "nanocuda/core/event.h"
#include "nanocuda/core/green_context.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

Stream::State::~State() {
  if (foreign || closed.load()) return;
  const auto* api = detail::loaded_driver();
  if (!api) return;
  if (CUresult rc = api->cuStreamDestroy(handle); rc != CUDA_SUCCESS)
    detail::record_deferred_error(rc, "cuStreamDestroy", "Stream");
}

Stream Stream::create(const Device& device, bool non_blocking, int priority) {
  CurrentContext guard(*device.context());
  // The driver clamps an out-of-range priority silently; say so instead (as cuda.core does).
  int least = 0, greatest = 0;
  NANOCUDA_CALL(cuCtxGetStreamPriorityRange, [&] { return "device " + std::to_string(device.ordinal()); }, &least,
                &greatest);
  if (priority < greatest || priority > least)
    throw ValueError("Stream: priority " + std::to_string(priority) + " is outside device " +
                     std::to_string(device.ordinal()) + "'s range [" + std::to_string(greatest) + ", " +
                     std::to_string(least) + "] (lower numbers run first)");
  CUstream h = nullptr;
  NANOCUDA_CALL(cuStreamCreateWithPriority,
                [&] { return "new stream on device " + std::to_string(device.ordinal()); }, &h,
                non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT, priority);
  auto state = std::make_shared<State>(h, device);
  state->stand_in = StreamRef::legacy(device).state_;
  return Stream(std::move(state));
}

Stream Stream::create_green(const Context& context, int priority, bool non_blocking) {
  const int ordinal = context.device_ordinal();
  if (!context.is_green())
    throw std::runtime_error("Stream::create_green: only supported on green contexts (device " +
                             std::to_string(ordinal) + "'s primary context: use Stream::create)");
  if (!non_blocking)
    throw ValueError("Stream::create_green", "streams of a green context must be non-blocking (non_blocking = true)");
  if (context.is_closed())
    throw std::runtime_error("Stream::create_green: the green context on device " + std::to_string(ordinal) +
                             " is closed");
  CUstream h = nullptr;
  auto what = [&] { return "new stream on a green context of device " + std::to_string(ordinal); };
  if (detail::driver_lacks("cuGreenCtxStreamCreate")) {
    // Some 13.0 drivers do not hand cuGreenCtxStreamCreate out through cuGetProcAddress. A
    // stream made while the green context's CUcontext (cuCtxFromGreenCtx) is current runs on
    // its SMs all the same (cuCtxFromGreenCtx's documented contract).
    CurrentContext guard(context);
    NANOCUDA_CALL(cuStreamCreateWithPriority, what, &h, CU_STREAM_NON_BLOCKING, priority);
  } else {
    NANOCUDA_CALL(cuGreenCtxStreamCreate, what, &h, context.green()->handle, CU_STREAM_NON_BLOCKING, priority);
  }
  auto state = std::make_shared<State>(h, Device(ordinal), std::make_shared<Context>(context));
  state->stand_in = StreamRef::legacy(state->device).state_;
  return Stream(std::move(state));
}

CUstream Stream::handle() const {
  if (state_->closed.load(std::memory_order_relaxed)) [[unlikely]]
    throw ValueError(describe() + ": the stream is closed");
  return state_->handle;
}

CUstream Stream::raw_handle() const noexcept { return state_->handle; }
const Device& Stream::device() const noexcept { return state_->device; }
const Context& Stream::context() const noexcept { return *state_->context; }
bool Stream::is_closed() const noexcept { return state_->closed.load(); }

// The stream operations are StreamRef's (one implementation for owned and foreign streams).
int Stream::priority() const { return StreamRef(*this).priority(); }
bool Stream::is_non_blocking() const { return StreamRef(*this).is_non_blocking(); }
void Stream::sync() const { StreamRef(*this).sync(); }
bool Stream::query() const { return StreamRef(*this).query(); }
void Stream::wait(const Event& event) const { StreamRef(*this).wait(event); }
void Stream::wait(StreamRef other) const { StreamRef(*this).wait(other); }
Event Stream::record(bool timing) const { return StreamRef(*this).record(timing); }
void Stream::record(const Event& event) const { StreamRef(*this).record(event); }

void Stream::close() {
  if (state_->closed.load()) return;
  sync();
  {
    CurrentContext guard(context());
    NANOCUDA_CALL(cuStreamDestroy, [&] { return describe(); }, state_->handle);
  }
  state_->closed.store(true);
}

std::string Stream::describe() const {
  char text[128];
  std::snprintf(text, sizeof text, "Stream %p (owned%s) on device %d", static_cast<void*>(state_->handle),
                state_->closed.load() ? ", closed" : "", state_->device.ordinal());
  return text;
}

}  // namespace nanocuda
