// The one launch pipeline: Launcher (a kernel bound to a config and a stream) and the one-off
// launch(stream, config, kernel, args...), which is a temporary Launcher.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "nanocuda/compile/kernel.h"
#include "nanocuda/core/stream_ref.h"
#include "nanocuda/launch/detail/launch_packed.h"
#include "nanocuda/launch/launch_config.h"
#include "nanocuda/launch/param_buffer.h"
#include "nanocuda/launch/param_packer.h"

namespace nanocuda {

// Resolves the kernel's function in the stream's context once and owns an aligned parameter
// buffer with its packer, wired to the kernel's real layout. A typed call checks the count
// and every argument size; every call makes the stream's context current if it is not (the
// one place the context policy is applied) and launches. Move-only; one thread at a time.
//
//   nanocuda::Launcher saxpy(kernel, config, stream);   // or kernel.bind(config, stream)
//   for (...) saxpy(2.0f, x, y, out, n);
class Launcher {
 public:
  Launcher(const Kernel& kernel, const LaunchConfig& config, StreamRef stream);
  Launcher(Launcher&& other) noexcept;
  Launcher& operator=(Launcher&& other) noexcept;
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Launches on the bound stream with `args` (trivially copyable, sizes checked).
  template <class... Args>
  void operator()(const Args&... args) {
    launch_on(stream_, args...);
  }
  // The same on another stream of the bound stream's context.
  template <class... Args>
  void launch_on(StreamRef on, const Args&... args) {
    static_assert((std::is_trivially_copyable_v<Args> && ...),
                  "kernel arguments are copied bytewise and must be trivially copyable");
    detail::check_typed_args<Args...>(target_);
    constexpr std::size_t n = sizeof...(Args);
    void* params[n == 0 ? 1 : n] = {const_cast<void*>(static_cast<const void*>(&args))...};
    launch_with(on, params);
  }

  // Launches on `on` with arguments written by `pack(ParamPacker& packer)` into the parameter
  // buffer (for callers that convert arguments at run time, like Python's). Re-entrant:
  // packing may run user code that calls this Launcher again before the first call has
  // launched; that nested call packs into a buffer of its own, so neither sees the other's.
  template <class Pack>
  void pack_and_launch(StreamRef on, Pack&& pack) {
    if (!try_pack_and_launch(on, pack)) pack_and_launch_unshared(on, pack);
  }
  // pack_and_launch's two halves, for a hot caller that keeps the nested case out of line
  // (Python's Launcher): the shared buffer, or false (nothing packed or launched) while a
  // call is still packing into it; then pack_and_launch_unshared, with a buffer of its own.
  template <class Pack>
  [[gnu::always_inline]] inline bool try_pack_and_launch(StreamRef on, Pack&& pack) {
    if (busy_) [[unlikely]] return false;
    busy_ = true;
    Release release{busy_};
    pack(packer_);
    launch_with(on, params_.pointers());
    return true;
  }
  template <class Pack>
  void pack_and_launch_unshared(StreamRef on, Pack&& pack) {
    ParamBuffer buffer(kernel_.param_layout());
    ParamPacker packer(kernel_.param_layout(), kernel_.name(), buffer.data(), buffer.pointers());
    pack(packer);
    launch_with(on, buffer.pointers());
  }

  // The one-off launch with run-time arguments (Python's launch()): `pack(ParamPacker&)`
  // writes them into a buffer on the stack (the heap past 4 KB), then the Launcher's launch
  // function runs; a temporary Launcher without the object, so nothing is copied or kept.
  template <class Pack>
  [[gnu::always_inline]] static inline void launch_once(StreamRef stream,
                                                       const LaunchConfig& config,
                                                       const Kernel& kernel, Pack&& pack) {
    const ParamLayout& layout = kernel.param_layout();
    alignas(16) unsigned char storage[4096];
    void* pointers[512];
    ParamBuffer big;
    unsigned char* data = storage;
    void** ptrs = pointers;
    if (layout.total_size() > sizeof storage || layout.count() > 512) [[unlikely]] {
      big = ParamBuffer(layout);
      data = big.data();
      ptrs = big.pointers();
    }
    ParamPacker packer(layout, kernel.name(), data, ptrs);
    pack(packer);
    const Context& context = stream.context();
    const detail::LaunchTarget target{kernel.function(context), kernel.name(), &layout, nullptr};
    launch_with(context.handle(), stream, config, target, ptrs);
  }

  [[nodiscard]] const Kernel& kernel() const noexcept { return kernel_; }
  [[nodiscard]] const LaunchConfig& config() const noexcept { return config_; }
  [[nodiscard]] StreamRef stream() const noexcept { return stream_; }
  [[nodiscard]] CUcontext context() const noexcept { return context_; }
  // The kernel's function in the bound stream's context.
  [[nodiscard]] CUfunction function() const noexcept { return target_.function; }
  // The parameter buffer pack_and_launch fills (its bytes are those of the last launch).
  [[nodiscard]] const ParamBuffer& params() const noexcept { return params_; }

 private:
  template <class... Args>
  friend void launch(StreamRef, const LaunchConfig&, const Kernel&, const Args&...);
  struct NoBuffer {};
  // A temporary Launcher for one typed launch: typed arguments need no parameter buffer.
  Launcher(const Kernel& kernel, const LaunchConfig& config, StreamRef stream, NoBuffer);

  [[gnu::always_inline]] void launch_with(StreamRef on, void** params) {
    launch_with(context_, on, config_, target_, params);
  }
  // The one launch function: the context policy and the checked driver call, both inside
  // detail::launch_packed (out of line, so no public header needs the driver table).
  [[gnu::always_inline]] static void launch_with(CUcontext context, StreamRef on,
                                                const LaunchConfig& config,
                                                const detail::LaunchTarget& target,
                                                void** params) {
    detail::launch_packed(context, on, config, target, params);
  }
  struct Release {
    bool& busy;
    ~Release() { busy = false; }
  };

  Kernel kernel_;
  LaunchConfig config_;
  StreamRef stream_;
  std::shared_ptr<const void> keep_stream_;  // the bound Stream's state; null for a foreign stream or a one-off
  CUcontext context_;
  std::uint32_t shared_mem_limit_ = 48 * 1024;  // the opt-in limit already set
  detail::LaunchTarget target_;                 // points at shared_mem_limit_
  ParamBuffer params_;
  ParamPacker packer_;  // over params_
  bool busy_ = false;   // a pack_and_launch is packing into params_
};

// A one-off launch of `kernel` on `stream` (for loops, bind once): a temporary Launcher, so
// the count and every size of `args` are checked against the kernel's real layout before
// anything reaches the driver, and the context policy is the Launcher's.
template <class... Args>
void launch(StreamRef stream, const LaunchConfig& config, const Kernel& kernel,
            const Args&... args) {
  Launcher(kernel, config, stream, Launcher::NoBuffer{})(args...);
}

}  // namespace nanocuda
