// Makes a launch's context current: the out-of-line, checked half of the policy.
#include "nanocuda/launch/launch_context.h"

#include "nanocuda/driver/check.h"

namespace nanocuda::detail {

void set_launch_context(CUcontext ctx) {
  check(driver().cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "launch");
}

}  // namespace nanocuda::detail
