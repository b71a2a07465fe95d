// SM resource queries and splits, green context creation and teardown.
#include "nanocuda/core/green_context.h"

#include <string>

#include "nanocuda/driver/check.h"
#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

std::string device_text(int ordinal) { return "device " + std::to_string(ordinal); }

// cuda.h's guideline per architecture, for drivers that do not fill the fields.
unsigned documented_min(int ordinal) {
  int major = Device(ordinal).compute_capability().first;
  return major >= 9 ? 8 : major == 8 ? 4 : 2;
}

}  // namespace

unsigned SmResource::min_partition_size() const {
  return raw.sm.minSmPartitionSize ? raw.sm.minSmPartitionSize : documented_min(device_ordinal);
}

unsigned SmResource::coscheduled_alignment() const {
  if (raw.sm.smCoscheduledAlignment) return raw.sm.smCoscheduledAlignment;
  return documented_min(device_ordinal) >= 8 ? 8 : 2;
}

SmResource device_sm_resource(const Device& device) {
  SmResource r;
  r.device_ordinal = device.ordinal();
  CUdevice dev = 0;
  NANOCUDA_CALL(cuDeviceGet, [&] { return device_text(r.device_ordinal); }, &dev, r.device_ordinal);
  NANOCUDA_CALL(cuDeviceGetDevResource, [&] { return device_text(r.device_ordinal) + " (SM resource)"; }, dev,
                &r.raw, CU_DEV_RESOURCE_TYPE_SM);
  return r;
}

SmResource context_sm_resource(const Context& context) {
  SmResource r;
  r.device_ordinal = context.device_ordinal();
  if (!context.is_green()) return device_sm_resource(Device(r.device_ordinal));
  if (context.is_closed())
    throw std::runtime_error("nanocuda::context_sm_resource: the green context on " + device_text(r.device_ordinal) +
                             " is closed");
  NANOCUDA_CALL(cuGreenCtxGetDevResource, [&] { return "green context on " + device_text(r.device_ordinal); },
                context.green()->handle, &r.raw, CU_DEV_RESOURCE_TYPE_SM);
  return r;
}

SmSplit split_sm_resource(const SmResource& input, unsigned groups, unsigned min_count, unsigned flags,
                          bool dry_run) {
  const std::string what = "nanocuda::split_sm_resource on " + device_text(input.device_ordinal);
  if (groups == 0) throw ValueError(what + ": the number of groups must be at least 1");
  // 0 asks for the smallest group (cuda.core's discovery mode).
  if (min_count == 0) min_count = input.min_partition_size();
  // Each group gets min_count rounded up to the minimum partition size and the alignment;
  // with flags (e.g. ignoring co-scheduling) the driver's rounding differs: it says itself.
  // A request that cannot fit is the driver's CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION (what
  // cuda.core's 13.1 split reports), with the sizes in the message.
  unsigned align = flags ? 1 : input.coscheduled_alignment();
  unsigned least = flags ? 1 : input.min_partition_size();
  unsigned each = min_count < least ? least : min_count;
  each = (each + align - 1) / align * align;
  auto sizes = [&] {
    return what + ": " + std::to_string(groups) + " group(s) of " + std::to_string(min_count) + " SMs (" +
           std::to_string(each) + " after rounding to the alignment of " + std::to_string(align) +
           ") do not fit in the resource's " + std::to_string(input.sm_count()) + " SMs";
  };
  if (static_cast<unsigned long long>(each) * groups > input.sm_count())
    detail::check(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "cuDevSmResourceSplitByCount", sizes);
  SmSplit out;
  out.groups.resize(groups);
  std::vector<CUdevResource> raw(groups);
  unsigned made = groups;
  NANOCUDA_CALL(cuDevSmResourceSplitByCount, [&] { return what; }, raw.data(), &made, &input.raw,
                &out.remainder.raw, flags, min_count);
  if (made != groups)
    detail::check(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "cuDevSmResourceSplitByCount", [&] {
      return what + ": the driver made " + std::to_string(made) + " of the " + std::to_string(groups) +
             " groups of " + std::to_string(min_count) + " SMs asked for";
    });
  for (unsigned i = 0; i < groups; ++i) out.groups[i] = SmResource{raw[i], input.device_ordinal, dry_run};
  out.remainder.device_ordinal = input.device_ordinal;
  out.remainder.dry_run = dry_run;
  return out;
}

Context create_green_context(const Device& device, const std::vector<SmResource>& resources) {
  const int ordinal = device.ordinal();
  const std::string what = "nanocuda::create_green_context on " + device_text(ordinal);
  if (resources.empty()) throw ValueError(what + ": resources must be provided (at least one SMResource)");
  std::vector<CUdevResource> raw;
  for (const SmResource& r : resources) {
    if (r.dry_run)
      throw ValueError(what + ": a dry-run SMResource (split with dry_run=True) cannot make a context");
    if (r.device_ordinal != ordinal)
      throw ValueError(what + ": an SMResource of " + device_text(r.device_ordinal) + " cannot be used here");
    raw.push_back(r.raw);
  }
  // The primary context first, as cuGreenCtxCreate advises (it retains it anyway).
  CurrentContext guard(*device.context());
  CUdevice dev = 0;
  NANOCUDA_CALL(cuDeviceGet, [&] { return what; }, &dev, ordinal);
  CUdevResourceDesc desc = nullptr;
  NANOCUDA_CALL(cuDevResourceGenerateDesc, [&] { return what; }, &desc, raw.data(),
                static_cast<unsigned>(raw.size()));
  CUgreenCtx green = nullptr;
  NANOCUDA_CALL(cuGreenCtxCreate, [&] { return what; }, &green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM);
  auto state = std::make_shared<detail::GreenContextState>(green, ordinal);
  CUcontext ctx = nullptr;
  NANOCUDA_CALL(cuCtxFromGreenCtx, [&] { return what; }, &ctx, green);
  state->context = ctx;
  return Context(ctx, ordinal, std::move(state));
}

bool Context::is_closed() const noexcept { return green_ && green_->closed; }

void Context::close() {
  if (!green_) return;  // primary contexts are shared with PyTorch and stay (cuda.core: a no-op)
  if (green_->closed) return;
  CUcontext current = nullptr;
  NANOCUDA_CALL(cuCtxGetCurrent, [&] { return "Context::close"; }, &current);
  // A launch on one of its streams left it current (nanocuda's launch policy, not the user's
  // choice): put back what was current before, as cuda.core (whose launches switch nothing) has.
  if (current == handle_ && detail::undo_launch_switch(handle_, Context::primary(ordinal_)->handle()))
    current = nullptr;
  if (current == handle_)
    throw std::runtime_error("Context::close: cannot close the green context on " + device_text(ordinal_) +
                             " while it is current; make another context current first");
  green_->closed = true;
  detail::forget_closed_context(handle_);
  // Streams (and their buffers) still made on it keep it until they go, as cuda.core's close
  // releases only the wrapper's reference: destroying it under a live stream would fail that
  // stream's own destroy later.
  if (green_.use_count() > 1) return;
  CUgreenCtx h = green_->handle;
  green_->handle = nullptr;
  NANOCUDA_CALL(cuGreenCtxDestroy, [&] { return "green context on " + device_text(ordinal_); }, h);
}

namespace detail {

GreenContextState::~GreenContextState() {
  if (!handle) return;
  const auto* api = loaded_driver();
  if (!api) return;
  // Its last stream went after close(): a launch on that stream may have left it current on
  // this thread, and a destroyed current context would fail every later call here.
  CUcontext current = nullptr;
  if (context && api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) {
    forget_closed_context(context);
    api->cuCtxSetCurrent(nullptr);  // none current: the runtime and nanocuda's guards pick the primary
  }
  if (CUresult rc = api->cuGreenCtxDestroy(handle); rc != CUDA_SUCCESS)
    record_deferred_error(rc, "cuGreenCtxDestroy", "green context");
}

}  // namespace detail

}  // namespace nanocuda
