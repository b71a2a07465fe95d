// Kernel::bind and the C++ Launcher's setup: the function resolved once per binding.
#include "nanocuda/launch/bound_kernel.h"

#include <utility>

namespace nanocuda {

BoundKernel::BoundKernel(const Kernel& kernel, const LaunchConfig& config, const Stream& stream)
    : kernel_(kernel),
      config_(config),
      stream_(stream),
      context_(stream.context().handle()),
      params_(kernel.param_layout()) {
  config_.validate();
  target_ = LaunchTarget{kernel_.function(stream_.context()), kernel_.name(),
                         &kernel_.param_layout(), &shared_mem_limit_};
}

BoundKernel::BoundKernel(BoundKernel&& other) noexcept
    : kernel_(other.kernel_),
      config_(other.config_),
      stream_(other.stream_),
      context_(other.context_),
      shared_mem_limit_(other.shared_mem_limit_),
      target_(other.target_),
      params_(std::move(other.params_)) {
  target_.shared_mem_limit = &shared_mem_limit_;  // the target points into this object
}

BoundKernel& BoundKernel::operator=(BoundKernel&& other) noexcept {
  if (this == &other) return *this;
  kernel_ = other.kernel_;
  config_ = other.config_;
  stream_ = other.stream_;
  context_ = other.context_;
  shared_mem_limit_ = other.shared_mem_limit_;
  target_ = other.target_;
  target_.shared_mem_limit = &shared_mem_limit_;
  params_ = std::move(other.params_);
  return *this;
}

BoundKernel Kernel::bind(const LaunchConfig& config, const Stream& stream) const {
  return BoundKernel(*this, config, stream);
}

}  // namespace nanocuda
