// What a Python nanocuda.Stream holds: an owning Stream (made by nanocuda) or a foreign stream's StreamRef.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>

#include "nanocuda/core/stream.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda::py {

// cuda.core's Stream is one type for streams it made and streams it adopted (from_handle,
// legacy, per-thread, torch's, CuPy's); the core keeps the two apart (Stream owns, StreamRef
// views), so the Python object holds one or the other and passes a StreamRef down. A foreign
// stream's close() (cuda.core: drop the reference) is this object's own flag: it never
// reaches the stream, which is its creator's.
class PyStream {
 public:
  explicit PyStream(Stream owned) : ref_(owned), owner_(std::move(owned)) {}
  explicit PyStream(StreamRef foreign) : ref_(foreign) {}
  // The Python face of `ref`: the viewed Stream (shared) when nanocuda made it, else foreign.
  static PyStream of(StreamRef ref) {
    if (std::optional<Stream> owner = ref.owner()) return PyStream(std::move(*owner));
    return PyStream(ref);
  }

  // The view passed down; a closed foreign stream is refused here, naming `call` (a closed
  // owned one by the view's own check, where it is used).
  [[nodiscard]] StreamRef ref(const char* call = "Stream") const {
    // Owned and closed with close() (the state's flag, read inline), or foreign and marked closed.
    if (foreign_closed_ || ref_.is_closed()) [[unlikely]]
      throw_closed(call);
    return ref_;
  }
  operator StreamRef() const { return ref(); }  // NOLINT: a Python Stream is usable wherever a StreamRef is
  [[nodiscard]] const StreamRef& unchecked() const noexcept { return ref_; }  // for repr, ==, hash
  [[nodiscard]] bool is_owned() const noexcept { return owner_.has_value(); }
  [[nodiscard]] bool is_closed() const noexcept { return owner_ ? owner_->is_closed() : foreign_closed_; }
  // Waits for the stream's work; then destroys it when nanocuda made it, else only marks this object closed.
  void close();

 private:
  [[noreturn]] void throw_closed(const char* call) const;
  StreamRef ref_;                // over owner_'s state, or a foreign stream's
  std::optional<Stream> owner_;  // set when nanocuda created the stream
  bool foreign_closed_ = false;
};

// The Python Stream for `stream` (Buffer.stream, Device.default_stream, ...).
nanobind::object stream_object(StreamRef stream);
// True for what speaks the stream protocol: a nanocuda Stream, a GraphBuilder, CuPy's and
// cuda.core's streams (anything with __cuda_stream__); torch's .cuda_stream too when `torch`.
bool is_stream_like(nanobind::handle obj, bool torch = false);
// Stream.adopt / Device.create_stream(obj): a nanocuda Stream as it is, else a foreign one.
PyStream adopt_stream(nanobind::handle obj, const char* where);

}  // namespace nanocuda::py
