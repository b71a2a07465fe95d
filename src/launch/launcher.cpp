// The Launcher's setup (the function resolved once per binding) and Kernel::bind.
#include "nanocuda/launch/launcher.h"

#include <memory>
#include <utility>

namespace nanocuda {

namespace {
const ParamLayout kNoParams;  // a temporary Launcher's packer: typed launches never pack
}  // namespace

Launcher::Launcher(const Kernel& kernel, const LaunchConfig& config, StreamRef stream)
    : kernel_(kernel),
      config_(config),
      stream_(stream),
      keep_stream_(stream.shared_state()),
      context_(stream.context().handle()),
      params_(kernel.param_layout()),
      packer_(kernel_.param_layout(), kernel_.name(), params_.data(), params_.pointers()) {
  config_.validate();
  target_ = detail::LaunchTarget{kernel_.function(stream_.context()), kernel_.name(),
                                 &kernel_.param_layout(), &shared_mem_limit_};
}

Launcher::Launcher(const Kernel& kernel, const LaunchConfig& config, StreamRef stream,
                   NoBuffer)
    : kernel_(kernel),
      config_(config),
      stream_(stream),
      context_(stream.context().handle()),
      packer_(kNoParams, kernel_.name(), nullptr, nullptr) {
  config_.validate();  // the same checks as a bound Launcher's
  target_ = detail::LaunchTarget{kernel_.function(stream_.context()), kernel_.name(),
                                 &kernel_.param_layout(), &shared_mem_limit_};
}

Launcher::Launcher(Launcher&& other) noexcept
    : kernel_(other.kernel_),
      config_(other.config_),
      stream_(other.stream_),
      keep_stream_(other.keep_stream_),
      context_(other.context_),
      shared_mem_limit_(other.shared_mem_limit_),
      target_(other.target_),
      params_(std::move(other.params_)),
      // The layout lives in the kernel's shared state; the buffer moved with its pointers.
      packer_(kernel_.param_layout(), kernel_.name(), params_.data(), params_.pointers()) {
  target_.shared_mem_limit = &shared_mem_limit_;  // the target points into this object
}

Launcher& Launcher::operator=(Launcher&& other) noexcept {
  if (this == &other) return *this;
  kernel_ = other.kernel_;
  config_ = other.config_;
  stream_ = other.stream_;
  keep_stream_ = other.keep_stream_;
  context_ = other.context_;
  shared_mem_limit_ = other.shared_mem_limit_;
  target_ = other.target_;
  target_.shared_mem_limit = &shared_mem_limit_;
  params_ = std::move(other.params_);
  // ParamPacker holds a reference: rebuilt in place over this object's buffer.
  std::destroy_at(&packer_);
  std::construct_at(&packer_, kernel_.param_layout(), kernel_.name(), params_.data(),
                    params_.pointers());
  return *this;
}

Launcher Kernel::bind(const LaunchConfig& config, StreamRef stream) const {
  return Launcher(*this, config, stream);
}

}  // namespace nanocuda
