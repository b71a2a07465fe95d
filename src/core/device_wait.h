// The scope of one of the core's waits for the device: the embedding runtime's hooks around it.
#pragma once

#include "nanocuda/core/wait_hooks.h"

namespace nanocuda::detail {

// Runs WaitHooks::before on entry and WaitHooks::after on exit (nothing when none are set).
class [[nodiscard]] DeviceWait {
 public:
  DeviceWait() noexcept;
  ~DeviceWait();
  DeviceWait(const DeviceWait&) = delete;
  DeviceWait& operator=(const DeviceWait&) = delete;

 private:
  void* token_ = nullptr;
};

}  // namespace nanocuda::detail
