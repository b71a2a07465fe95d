// The scope of one of the core's hidden waits for the device: the embedding runtime's hooks around it.
#pragma once

#include "nanocuda/core/wait_hooks.h"

namespace nanocuda::detail {

// Runs WaitHooks::before on entry and WaitHooks::after on exit (nothing when none are set).
class [[nodiscard]] HiddenWait {
 public:
  HiddenWait() noexcept;
  ~HiddenWait();
  HiddenWait(const HiddenWait&) = delete;
  HiddenWait& operator=(const HiddenWait&) = delete;

 private:
  void* token_ = nullptr;
};

}  // namespace nanocuda::detail
