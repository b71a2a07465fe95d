// Launching kernels: the checked raw launch every path ends in, and the typed C++ launch.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "nanocuda/launch/launch_config.h"
#include "nanocuda/launch/param_layout.h"
#include "nanocuda/core/stream.h"

namespace nanocuda {

// What a launch needs to know about its kernel, resolved once per (kernel, context).
struct LaunchTarget {
  CUfunction function = nullptr;
  std::string_view name;                      // for errors
  const ParamLayout* layout = nullptr;        // for the typed launch's size checks
  std::uint32_t* shared_mem_limit = nullptr;  // the opt-in limit already set (cache)
};

// Launches `target.function` with `params` (cuLaunchKernel's void** array) on `stream`.
// Raises the kernel's dynamic-shared-memory limit first when config.shared_mem exceeds
// the limit already set (48 KB by default). Clusters, cooperative launch and PDL go
// through cuLaunchKernelEx. The stream's context must be current (launch paths ensure it).
void launch_packed(const Stream& stream, const LaunchConfig& config, const LaunchTarget& target,
                   void** params);

namespace detail {
[[noreturn]] void throw_typed_mismatch(std::string_view kernel, std::size_t index,
                                       std::size_t expected, std::size_t given);
[[noreturn]] void throw_typed_count(std::string_view kernel, std::size_t expected,
                                    std::size_t given);
}  // namespace detail

// Checks the count and every size of `Args` against the kernel's real layout.
template <class... Args>
void check_typed_args(const LaunchTarget& target) {
  constexpr std::size_t n = sizeof...(Args);
  if (!target.layout) return;
  const auto& p = target.layout->params;
  if (p.size() != n) detail::throw_typed_count(target.name, p.size(), n);
  constexpr std::array<std::size_t, n> sizes{sizeof(Args)...};
  for (std::size_t i = 0; i < n; ++i)
    if (p[i].size != sizes[i]) detail::throw_typed_mismatch(target.name, i, p[i].size, sizes[i]);
}

// The typed C++ launch: argument addresses are packed at compile time (no buffer, no
// conversion); the count and every size are still checked against the kernel's real layout.
template <class... Args>
void launch(const Stream& stream, const LaunchConfig& config, const LaunchTarget& target,
            const Args&... args) {
  static_assert((std::is_trivially_copyable_v<Args> && ...),
                "kernel arguments are copied bytewise and must be trivially copyable");
  check_typed_args<Args...>(target);
  constexpr std::size_t n = sizeof...(Args);
  void* params[n == 0 ? 1 : n] = {const_cast<void*>(static_cast<const void*>(&args))...};
  launch_packed(stream, config, target, params);
}

}  // namespace nanocuda
