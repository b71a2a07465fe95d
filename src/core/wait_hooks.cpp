// The embedding runtime's hooks around the core's hidden waits (core/wait_hooks.h).
#include "device_wait.h"

namespace nanocuda {

namespace {
WaitHooks g_hooks;
}  // namespace

void set_wait_hooks(WaitHooks hooks) noexcept { g_hooks = hooks; }

namespace detail {
DeviceWait::DeviceWait() noexcept : token_(g_hooks.before ? g_hooks.before() : nullptr) {}
DeviceWait::~DeviceWait() {
  if (g_hooks.after) g_hooks.after(token_);
}
}  // namespace detail

}  // namespace nanocuda
