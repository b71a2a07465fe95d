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
  detail::forget_launch_switch();
}

namespace detail {

namespace {
// The context the last launch switch made current on this thread, and what was current
// before a run of launch switches began (a chain of them keeps the first: the user's).
thread_local CUcontext t_launch_made = nullptr;
thread_local CUcontext t_before_launches = nullptr;
}  // namespace

void note_launch_switch(CUcontext before, CUcontext made) noexcept {
  if (t_launch_made == nullptr || before != t_launch_made) t_before_launches = before;
  t_launch_made = made;
}

void forget_launch_switch() noexcept { t_launch_made = t_before_launches = nullptr; }

// Context::close's half (core/green_context.cpp): if `ctx` is current only because a launch
// made it so, makes current again what was before (`fallback` when that was nothing, `ctx`
// itself, or a context closed since) and returns true.
bool undo_launch_switch(CUcontext ctx, CUcontext fallback) {
  if (ctx == nullptr || ctx != t_launch_made) return false;
  CUcontext restore = t_before_launches && t_before_launches != ctx ? t_before_launches : fallback;
  NANOCUDA_CALL(cuCtxSetCurrent, [] { return "Context::close (restoring the context current before a launch)"; },
                restore);
  forget_launch_switch();
  return true;
}

void forget_closed_context(CUcontext ctx) noexcept {
  if (t_before_launches == ctx) t_before_launches = nullptr;
  if (t_launch_made == ctx) t_launch_made = nullptr;
}

}  // namespace detail

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
