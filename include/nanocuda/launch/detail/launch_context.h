// The launch paths' context policy (internal: it reads the driver table, which no public header
// exposes): every launch makes its stream's context current if it is not, and leaves it current.
#pragma once

#include <cuda.h>

#include "nanocuda/driver/driver_api.h"

namespace nanocuda {

namespace detail {
void set_launch_context(CUcontext ctx);  // cuCtxSetCurrent, checked
}  // namespace detail

// One cuCtxGetCurrent when `ctx` is already current (the common case); otherwise
// cuCtxSetCurrent. Not a scope: launches leave the context current, so the next launch on
// the same device pays nothing (CurrentContext restores, for calls that are not launches).
// Inline: it is on every launch's hot path (detail::launch_packed and _bench's native loops).
inline void make_launch_context_current(CUcontext ctx) {
  CUcontext current = nullptr;
  detail::driver().cuCtxGetCurrent(&current);
  if (current != ctx) [[unlikely]] detail::set_launch_context(ctx);
}

}  // namespace nanocuda
