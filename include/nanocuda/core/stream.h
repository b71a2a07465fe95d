// A CUDA stream nanocuda created and owns (streams made elsewhere are StreamRefs: stream_ref.h).
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "nanocuda/core/device.h"

namespace nanocuda {

class Event;
class StreamRef;

// A cheap, copyable owner of a stream nanocuda created: the CUstream is destroyed when the
// last Stream and the last Buffer allocated on it are gone, or at close(). Streams made
// elsewhere (legacy, per-thread, PyTorch's, CuPy's, your own) are StreamRefs, never Streams.
class Stream {
 public:
  // A new stream on `device`. Non-blocking (no implicit sync with the legacy stream) by
  // default; lower `priority` numbers run first (see Device::stream_priority_range()).
  static Stream create(const Device& device, bool non_blocking = true, int priority = 0);
  // A new stream on green context `context` (cuGreenCtxStreamCreate); throws for a primary
  // or closed context, and ValueError for non_blocking = false (the driver makes green
  // contexts' streams non-blocking only).
  static Stream create_green(const Context& context, int priority = 0, bool non_blocking = true);

  Stream(std::nullptr_t) = delete;  // a stream is never made from 0 by accident

  [[nodiscard]] CUstream handle() const;  // throws if closed
  [[nodiscard]] CUstream raw_handle() const noexcept;
  [[nodiscard]] const Device& device() const noexcept;
  [[nodiscard]] const Context& context() const noexcept;
  [[nodiscard]] bool is_closed() const noexcept;
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
  // Records a new event (timing disabled unless asked) on the stream and returns it.
  [[nodiscard]] Event record(bool timing = false) const;
  // Records `event` on the stream.
  void record(const Event& event) const;
  // Waits for the stream's work, then destroys it. Further use raises an error.
  void close();

  // "Stream 0x55d0c0 (owned) on device 0", for error messages.
  [[nodiscard]] std::string describe() const;

  bool operator==(const Stream& other) const noexcept { return state_ == other.state_; }

  struct State;
  explicit Stream(std::shared_ptr<State> state) noexcept : state_(std::move(state)) {}
  [[nodiscard]] const std::shared_ptr<State>& state() const noexcept { return state_; }

 private:
  std::shared_ptr<State> state_;
};

// What every Stream and every StreamRef of it reads (StreamRef inline, without a call). The
// CUstream is destroyed with the last Stream (or Buffer) holding it, or at close().
struct Stream::State : std::enable_shared_from_this<Stream::State> {  // StreamRef::stream() shares it
  CUstream handle = nullptr;
  Device device;
  std::shared_ptr<Context> context;
  std::atomic<bool> closed{false};
  bool foreign = false;  // the per-device stand-in StreamRef views foreign streams through (owns nothing, never closed)
  State* stand_in = nullptr;  // this device's stand-in: where a KeptStream that lets this state go points

  State(CUstream h, Device dev) : handle(h), device(dev), context(dev.context()) {}
  State(CUstream h, Device dev, std::shared_ptr<Context> ctx) : handle(h), device(dev), context(std::move(ctx)) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State();  // destroys an unclosed stream (never the stand-in); errors are deferred, never thrown
};

}  // namespace nanocuda
