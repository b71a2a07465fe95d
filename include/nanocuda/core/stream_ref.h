// A non-owning view of a CUDA stream: the parameter type of everything that only queues work.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nanocuda/core/stream.h"

namespace nanocuda {

class Event;

// What code that only queues work on a stream needs, as a cheap value (as std::string_view
// is to std::string; two words, passed in registers): the CUstream and a Stream state: a
// nanocuda Stream's own (context, device, and the closed flag, so use after close() is a
// clear error), or for a foreign stream its device's stand-in (primary context, never closed). Never creates or destroys the
// stream. Made implicitly from a Stream (which must outlive the view), or explicitly from a
// CUstream created elsewhere (PyTorch's, CuPy's, your own; its lifetime is yours to manage).
class StreamRef {
 public:
  // Views `stream` (implicit: a Stream is usable wherever a StreamRef is asked for).
  StreamRef(const Stream& stream) noexcept
      : handle_(stream.state()->handle), state_(stream.state().get()) {}
  // A stream nanocuda did not create, on `device` (work on it runs in the device's primary
  // context); CU_STREAM_LEGACY / CU_STREAM_PER_THREAD are the device's implicit streams.
  StreamRef(CUstream handle, const Device& device);
  // A stream nanocuda did not create, its device read from its context; 0 / CU_STREAM_LEGACY /
  // CU_STREAM_PER_THREAD, which have none, are those of `device_ordinal` (default: the current device).
  [[nodiscard]] static StreamRef from_handle(CUstream handle, int device_ordinal = -1);
  // The legacy default stream of `device`.
  [[nodiscard]] static StreamRef legacy(const Device& device) { return StreamRef(CU_STREAM_LEGACY, device); }
  // The stream a call queues on when its caller names none: the legacy default stream of
  // `device`, cuda.core's default, so code ported from it orders its work the same way.
  [[nodiscard]] static StreamRef default_for(const Device& device) { return legacy(device); }
  // The per-thread default stream of `device` (each host thread's own implicit stream, which
  // does not synchronize with other streams).
  [[nodiscard]] static StreamRef per_thread(const Device& device) { return StreamRef(CU_STREAM_PER_THREAD, device); }
  StreamRef(std::nullptr_t) = delete;  // no stream from a stray 0: say which device
  StreamRef(int) = delete;

  // The CUstream; throws nanocuda::ValueError when the viewed Stream was closed.
  [[nodiscard]] CUstream handle() const {
    if (state_->closed.load(std::memory_order_relaxed)) [[unlikely]]
      throw_closed();
    return handle_;
  }
  // The CUstream without the closed check (for messages and comparisons).
  [[nodiscard]] CUstream raw_handle() const noexcept { return handle_; }
  [[nodiscard]] int device_ordinal() const noexcept { return state_->device.ordinal(); }
  [[nodiscard]] const Device& device() const noexcept { return state_->device; }
  // The context work on the stream runs in (a green context's stream: that green context).
  [[nodiscard]] const Context& context() const noexcept { return *state_->context; }
  // True when this views a Stream that nanocuda created (and will destroy); a view itself never owns.
  [[nodiscard]] bool views_owned_stream() const noexcept { return state() != nullptr; }
  // True when the viewed Stream was closed (a foreign stream's closing is not visible here).
  [[nodiscard]] bool is_closed() const noexcept { return state() && state()->closed.load(); }

  [[nodiscard]] int priority() const;
  [[nodiscard]] bool is_non_blocking() const;
  // Blocks until all work queued on the stream is done.
  void sync() const;
  // True when all queued work has completed (cuStreamQuery), without blocking.
  [[nodiscard]] bool query() const;
  // Makes future work on this stream wait for `event`.
  void wait(const Event& event) const;
  // Makes future work on this stream wait for all work queued so far on `other`.
  void wait(StreamRef other) const;
  // Records `event` on the stream.
  void record(const Event& event) const;
  // Records a new event (timing disabled unless asked) on the stream and returns it.
  [[nodiscard]] Event record(bool timing) const;

  // The Stream this views (sharing its state, so it stays alive), or nothing for a foreign stream.
  [[nodiscard]] std::optional<Stream> owner() const {
    if (Stream::State* s = state()) [[likely]]
      return Stream(s->shared_from_this());
    return std::nullopt;
  }
  // The viewed Stream's shared state, for what must keep it alive (a bound Launcher); null
  // for a foreign stream, whose lifetime is its creator's business.
  [[nodiscard]] std::shared_ptr<const void> shared_state() const {
    return state() ? std::shared_ptr<const void>(state()->shared_from_this()) : nullptr;
  }

  [[nodiscard]] std::string describe() const;
  // Views of the same CUstream on the same device are equal.
  bool operator==(const StreamRef& other) const noexcept {
    return handle_ == other.handle_ && device_ordinal() == other.device_ordinal();
  }

 private:
  friend class Stream;       // points a new Stream's state at its device's stand-in
  friend class KeptStream;   // re-points a view at the stand-in without a lookup
  StreamRef(CUstream handle, Stream::State* state) noexcept : handle_(handle), state_(state) {}
  [[noreturn]] void throw_closed() const;

  // The viewed Stream's state; null for a foreign stream.
  [[nodiscard]] Stream::State* state() const noexcept { return state_->foreign ? nullptr : state_; }

  CUstream handle_ = nullptr;
  Stream::State* state_;  // never null: a foreign stream's is its device's stand-in (never freed)
};

}  // namespace nanocuda
