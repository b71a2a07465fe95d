// Makes a launch's context current, only when it is not.
#include "nanocuda/launch/launch_context.h"

#include "nanocuda/driver/check.h"

namespace nanocuda {

void make_launch_context_current(CUcontext ctx) {
  const auto& api = detail::driver();
  CUcontext current = nullptr;
  api.cuCtxGetCurrent(&current);
  if (current != ctx) [[unlikely]]
    detail::check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "launch");
}

}  // namespace nanocuda
