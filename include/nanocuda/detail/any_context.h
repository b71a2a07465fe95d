// For driver calls that need *a* current context but no particular one (descriptor encodes,
// parameter-layout queries): device 0's primary context when the thread has none.
#pragma once

#include <optional>

#include "nanocuda/context.h"
#include "nanocuda/detail/driver_api.h"

namespace nanocuda::detail {

class [[nodiscard]] AnyContext {
 public:
  AnyContext() {
    CUcontext current = nullptr;
    driver().cuCtxGetCurrent(&current);
    if (!current) [[unlikely]] guard_.emplace(*Context::primary(0));
  }

 private:
  std::optional<CurrentContext> guard_;
};

}  // namespace nanocuda::detail
