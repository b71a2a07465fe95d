// The launch paths' context policy, in one place: every launch makes its stream's context
// current if it is not, and leaves it current afterwards (as a runtime launch does).
#pragma once

#include <cuda.h>

namespace nanocuda {

// One cuCtxGetCurrent when `ctx` is already current (the common case); otherwise
// cuCtxSetCurrent. Not a scope: launches leave the context current, so the next launch on
// the same device pays nothing (CurrentContext restores, for calls that are not launches).
void make_launch_context_current(CUcontext ctx);

}  // namespace nanocuda
