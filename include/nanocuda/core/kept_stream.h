// A StreamRef that keeps a nanocuda Stream alive: what holds on to a stream past the call that gave it.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

// A StreamRef plus a share of the viewed Stream's state, so the Stream outlives whatever holds
// this (a Buffer freed in its stream's order, a GraphBuilder, a GraphCompleteOptions) even when
// every Stream object is gone. A foreign stream's is a plain view: keeping a stream nanocuda
// did not create alive is its creator's business. Never creates or destroys a CUstream itself.
class KeptStream {
 public:
  KeptStream(StreamRef stream) : ref_(stream), keep_(stream.shared_state()) {}  // NOLINT: implicit, as StreamRef's
  KeptStream(const Stream& stream) : KeptStream(StreamRef(stream)) {}           // NOLINT

  // Views `stream` instead (keeping its Stream, if any): what a Buffer does at each reallocation.
  KeptStream& operator=(StreamRef stream) {
    ref_ = stream;
    if (stream.views_owned_stream()) keep_ = stream.shared_state();
    else if (keep_) keep_.reset();
    return *this;
  }
  // Lets a kept Stream go (it may be destroyed now), leaving a view of the device's legacy
  // stream; a foreign stream's view is kept as it is (nothing of it was held).
  void release_stream() noexcept {
    if (!keep_) return;
    ref_ = StreamRef(CU_STREAM_LEGACY, ref_.state_->stand_in);
    keep_.reset();
  }

  [[nodiscard]] const StreamRef& ref() const noexcept { return ref_; }
  operator StreamRef() const noexcept { return ref_; }  // NOLINT: usable wherever a StreamRef is asked for

  [[nodiscard]] CUstream handle() const { return ref_.handle(); }
  [[nodiscard]] CUstream raw_handle() const noexcept { return ref_.raw_handle(); }
  [[nodiscard]] const Device& device() const noexcept { return ref_.device(); }
  [[nodiscard]] int device_ordinal() const noexcept { return ref_.device_ordinal(); }
  [[nodiscard]] const Context& context() const noexcept { return ref_.context(); }
  [[nodiscard]] bool is_closed() const noexcept { return ref_.is_closed(); }
  [[nodiscard]] bool views_owned_stream() const noexcept { return ref_.views_owned_stream(); }
  [[nodiscard]] std::string describe() const { return ref_.describe(); }
  void sync() const { ref_.sync(); }
  void wait(StreamRef other) const { ref_.wait(other); }

 private:
  StreamRef ref_;
  std::shared_ptr<const void> keep_;  // the viewed Stream's state; null for a foreign stream
};

}  // namespace nanocuda
