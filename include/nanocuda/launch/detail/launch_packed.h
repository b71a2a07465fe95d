// The launch layer's internal verb: the checked raw launch every Launcher call ends in (not API).
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nanocuda/core/stream_ref.h"
#include "nanocuda/launch/launch_config.h"
#include "nanocuda/compile/param_layout.h"

namespace nanocuda::detail {

// What a launch needs to know about its kernel, resolved once per (kernel, context).
struct LaunchTarget {
  CUfunction function = nullptr;
  std::string_view name;                      // for errors
  const ParamLayout* layout = nullptr;        // for the typed launch's size checks
  std::uint32_t* shared_mem_limit = nullptr;  // the opt-in limit already set (cache)
};

// Launches `target.function` with `params` (cuLaunchKernel's void** array) on `stream`,
// after making `context` (the stream's) current if it is not: the one place the context
// policy is applied (detail/launch_context.h). Raises the kernel's dynamic-shared-memory
// limit first when config.shared_mem exceeds the limit already set (48 KB by default).
// Clusters, cooperative launch and PDL go through cuLaunchKernelEx.
void launch_packed(CUcontext context, StreamRef stream, const LaunchConfig& config,
                   const LaunchTarget& target, void** params);

[[noreturn]] void throw_typed_mismatch(std::string_view kernel, std::size_t index,
                                       std::size_t expected, std::size_t given);
[[noreturn]] void throw_typed_count(std::string_view kernel, std::size_t expected,
                                    std::size_t given);

// Checks the count and every size of `Args` against the kernel's real layout.
template <class... Args>
void check_typed_args(const LaunchTarget& target) {
  constexpr std::size_t n = sizeof...(Args);
  if (!target.layout) return;
  const auto& p = target.layout->params;
  if (p.size() != n) throw_typed_count(target.name, p.size(), n);
  constexpr std::array<std::size_t, n> sizes{sizeof(Args)...};
  for (std::size_t i = 0; i < n; ++i)
    if (p[i].size != sizes[i]) throw_typed_mismatch(target.name, i, p[i].size, sizes[i]);
}

}  // namespace nanocuda::detail
