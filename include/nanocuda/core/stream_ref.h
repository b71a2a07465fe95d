// A non-owning view of a CUDA stream, next to the owning (shared) Stream.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

#include "nanocuda/core/stream.h"

namespace nanocuda {

class Event;

// What code that only queues work on a stream needs: a view that never creates or destroys
// the stream (as std::string_view is to std::string). Made from a Stream (which must outlive
// the view) or from a CUstream created elsewhere (PyTorch's, CuPy's, your own). Every API
// taking `const Stream&` accepts a StreamRef: it converts to the viewed Stream, or to a
// borrowed (non-owning) Stream for a raw handle.
class StreamRef {
 public:
  // Views `stream` (implicit: a Stream is usable wherever a StreamRef is asked for).
  StreamRef(const Stream& stream) noexcept;
  // A stream nanocuda did not create, on `device`; 0 is the legacy default stream.
  StreamRef(CUstream handle, const Device& device) noexcept;
  StreamRef(std::nullptr_t) = delete;  // no stream from a stray 0: say which device
  StreamRef(int) = delete;

  // The CUstream; throws nanocuda::ValueError when the viewed Stream was closed.
  [[nodiscard]] CUstream handle() const;
  [[nodiscard]] int device_ordinal() const noexcept { return device_ordinal_; }
  // True when this views a Stream that nanocuda created (and will destroy); a view itself never owns.
  [[nodiscard]] bool views_owned_stream() const noexcept;

  void sync() const;
  [[nodiscard]] bool query() const;
  void wait(const Event& event) const;
  void record(const Event& event) const;

  // The viewed Stream, or a borrowed Stream for a raw handle (Stream::borrow).
  [[nodiscard]] Stream stream() const;
  // Implicit, so every API taking `const Stream&` accepts a view.
  operator Stream() const { return stream(); }

  [[nodiscard]] std::string describe() const;
  // Views of the same CUstream on the same device are equal.
  bool operator==(const StreamRef& other) const noexcept {
    return handle_ == other.handle_ && device_ordinal_ == other.device_ordinal_;
  }

 private:
  const Stream* stream_ = nullptr;  // the viewed Stream, when made from one
  CUstream handle_ = nullptr;
  int device_ordinal_ = 0;
};

}  // namespace nanocuda
