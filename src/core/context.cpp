// Primary contexts: retained once per device per process, made current per scope.
#include "nanocuda/core/context.h"

#include <mutex>
#include <string>
#include <vector>

#include "nanocuda/driver/check.h"

namespace nanocuda {

std::shared_ptr<Context> Context::primary(int ordinal) {
  static std::mutex mutex;
  // Deliberately never destroyed: see the class comment.
  static auto* contexts = new std::vector<std::shared_ptr<Context>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (contexts->size() <= static_cast<size_t>(ordinal)) contexts->resize(ordinal + 1);
  auto& slot = (*contexts)[ordinal];
  if (!slot) {
    const auto& api = detail::driver();
    CUdevice dev = 0;
    auto where = [&] { return "device " + std::to_string(ordinal); };
    detail::check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet", where);
    CUcontext ctx = nullptr;
    detail::check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain", where);
    slot = std::make_shared<Context>(ctx, ordinal);
  }
  return slot;
}

void Context::set_current() const {
  NANOCUDA_CALL(cuCtxSetCurrent, [&] { return "device " + std::to_string(ordinal_); }, handle_);
}

CurrentContext::CurrentContext(const Context& ctx) {
  const auto& api = detail::driver();
  detail::check(api.cuCtxGetCurrent(&previous_), "cuCtxGetCurrent");
  if (previous_ != ctx.handle()) {
    detail::check(api.cuCtxSetCurrent(ctx.handle()), "cuCtxSetCurrent",
                  [&] { return "device " + std::to_string(ctx.device_ordinal()); });
    switched_ = true;
  }
}

CurrentContext::~CurrentContext() {
  if (!switched_) return;
  if (CUresult rc = detail::driver().cuCtxSetCurrent(previous_); rc != CUDA_SUCCESS)
    detail::record_deferred_error(rc, "cuCtxSetCurrent", "CurrentContext (restoring)");
}

}  // namespace nanocuda
