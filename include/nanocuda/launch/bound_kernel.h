// A kernel bound to a launch config and a stream (Kernel::bind): the C++ Launcher. Also the
// one-off launch(stream, config, kernel, args...) for C++ users, with no LaunchTarget.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "nanocuda/compile/kernel.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/launch/launch.h"
#include "nanocuda/launch/launch_config.h"
#include "nanocuda/launch/launch_context.h"
#include "nanocuda/launch/param_buffer.h"

namespace nanocuda {

// Resolves the kernel's function in the stream's context once and owns an aligned parameter
// buffer wired to the kernel's layout. A call checks the count and every argument size
// against the kernel's real layout (like Python's Launcher), makes the stream's context
// current if it is not, and launches. Not thread-safe (one parameter buffer); move-only.
//
//   auto saxpy = kernel.bind(config, stream);
//   for (...) saxpy(2.0f, x, y, out, n);
class BoundKernel {
 public:
  BoundKernel(const Kernel& kernel, const LaunchConfig& config, const Stream& stream);
  BoundKernel(BoundKernel&& other) noexcept;
  BoundKernel& operator=(BoundKernel&& other) noexcept;
  BoundKernel(const BoundKernel&) = delete;
  BoundKernel& operator=(const BoundKernel&) = delete;

  // Launches on the bound stream with `args` (trivially copyable, sizes checked).
  template <class... Args>
  void operator()(const Args&... args) {
    launch_on(stream_, args...);
  }
  // The same on another stream of the bound stream's context.
  template <class... Args>
  void launch_on(const Stream& on, const Args&... args) {
    static_assert((std::is_trivially_copyable_v<Args> && ...),
                  "kernel arguments are copied bytewise and must be trivially copyable");
    check_typed_args<Args...>(target_);
    constexpr std::size_t n = sizeof...(Args);
    void* params[n == 0 ? 1 : n] = {const_cast<void*>(static_cast<const void*>(&args))...};
    launch_params(on, params);
  }

  // Launches with the bytes already written into params() (e.g. by a ParamPacker over it).
  void launch_buffer(const Stream& on) { launch_params(on, params_.pointers()); }
  // Launches with any void** array laid out for this kernel (a second buffer, for a call
  // that must not touch params() because another one is still filling it).
  void launch_params(const Stream& on, void** params) {
    make_launch_context_current(context_);
    launch_packed(on, config_, target_, params);
  }

  [[nodiscard]] const Kernel& kernel() const noexcept { return kernel_; }
  [[nodiscard]] const LaunchConfig& config() const noexcept { return config_; }
  [[nodiscard]] const Stream& stream() const noexcept { return stream_; }
  [[nodiscard]] CUcontext context() const noexcept { return context_; }
  [[nodiscard]] const LaunchTarget& target() const noexcept { return target_; }
  [[nodiscard]] const ParamBuffer& params() const noexcept { return params_; }

 private:
  Kernel kernel_;
  LaunchConfig config_;
  Stream stream_;
  CUcontext context_;
  std::uint32_t shared_mem_limit_ = 48 * 1024;  // the opt-in limit already set
  LaunchTarget target_;                         // points at shared_mem_limit_
  ParamBuffer params_;
};

// A one-off launch of `kernel` on `stream` (for loops, bind once): the count and every size
// of `args` are checked against the kernel's real layout before anything reaches the driver.
template <class... Args>
void launch(const Stream& stream, const LaunchConfig& config, const Kernel& kernel,
            const Args&... args) {
  static_assert((std::is_trivially_copyable_v<Args> && ...),
                "kernel arguments are copied bytewise and must be trivially copyable");
  LaunchTarget target{nullptr, kernel.name(), &kernel.param_layout(), nullptr};
  check_typed_args<Args...>(target);
  target.function = kernel.function(stream.context());
  make_launch_context_current(stream.context().handle());
  constexpr std::size_t n = sizeof...(Args);
  void* params[n == 0 ? 1 : n] = {const_cast<void*>(static_cast<const void*>(&args))...};
  launch_packed(stream, config, target, params);
}

}  // namespace nanocuda
