// Makes a launch's context current: the out-of-line, checked half of the policy.
#include "nanocuda/launch/detail/launch_context.h"

#include "nanocuda/core/context.h"
#include "nanocuda/driver/check.h"

namespace nanocuda::detail {

void set_launch_context(CUcontext ctx) {
  CUcontext before = nullptr;  // cold path: the switch itself is the expensive part
  check(driver().cuCtxGetCurrent(&before), "cuCtxGetCurrent", "launch");
  check(driver().cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "launch");
  note_launch_switch(before, ctx);
}

}  // namespace nanocuda::detail
