// For driver calls that need *a* current context but no particular one (descriptor encodes,
// parameter-layout queries): device 0's primary context when the thread has none.
#pragma once

#include <optional>

#include "nanocuda/core/context.h"
#include "nanocuda/driver/driver_api.h"

namespace nanocuda::detail {

class [[nodiscard]] AnyContext {
 public:
  AnyContext() {
    driver().cuCtxGetCurrent(&context_);
    if (!context_) [[unlikely]] {
      std::shared_ptr<Context> primary = Context::primary(0);
      guard_.emplace(*primary);
      context_ = primary->handle();
    }
  }

  // The context current for this object's lifetime.
  [[nodiscard]] CUcontext get() const noexcept { return context_; }

 private:
  CUcontext context_ = nullptr;
  std::optional<CurrentContext> guard_;
};

}  // namespace nanocuda::detail
