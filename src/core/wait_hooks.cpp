// The embedding runtime's hooks around the core's hidden waits (core/wait_hooks.h).
#include "hidden_wait.h"

namespace nanocuda {

namespace {
WaitHooks g_hooks;
}  // namespace

void set_wait_hooks(WaitHooks hooks) noexcept { g_hooks = hooks; }

namespace detail {
HiddenWait::HiddenWait() noexcept : token_(g_hooks.before ? g_hooks.before() : nullptr) {}
HiddenWait::~HiddenWait() {
  if (g_hooks.after) g_hooks.after(token_);
}
}  // namespace detail

}  // namespace nanocuda
