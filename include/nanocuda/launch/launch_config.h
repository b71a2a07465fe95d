// How a kernel is launched: grid, block, dynamic shared memory, clusters, cooperative, PDL.
#pragma once

#include <cstdint>
#include <string>

namespace nanocuda {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  [[nodiscard]] std::uint64_t volume() const noexcept {
    return static_cast<std::uint64_t>(x) * y * z;
  }
  bool operator==(const Dim3&) const = default;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  std::uint32_t shared_mem = 0;  // dynamic shared memory, bytes
  Dim3 cluster{0, 0, 0};         // thread-block cluster shape; all zero means none
  bool cooperative = false;      // grid-wide sync (cudaLaunchCooperativeKernel semantics)
  bool programmatic_dependent_launch = false;  // may start before the previous kernel ends

  [[nodiscard]] bool has_cluster() const noexcept { return cluster.x != 0; }
  // Plain cuLaunchKernel suffices (no launch attributes needed).
  [[nodiscard]] bool is_simple() const noexcept {
    return !has_cluster() && !cooperative && !programmatic_dependent_launch;
  }
  // Checks the rules that need no device: non-zero dims, block <= 1024 threads, grid and
  // block dimension limits, the cluster dividing the grid. Throws ValueError naming the
  // rule and the value. Device limits (shared memory, cluster size) are checked at launch.
  void validate() const;
  [[nodiscard]] std::string describe() const;
};

}  // namespace nanocuda
