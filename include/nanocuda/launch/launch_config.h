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
  // Blocks per grid; with a cluster shape, clusters per grid (cuda.core's rule), so the
  // launch runs grid × cluster blocks: blocks() says how many.
  Dim3 grid;
  Dim3 block;
  std::uint32_t shared_mem = 0;  // dynamic shared memory, bytes
  Dim3 cluster{0, 0, 0};         // thread-block cluster shape (blocks); all zero means none
  bool cooperative = false;      // grid-wide sync (cudaLaunchCooperativeKernel semantics)
  bool programmatic_dependent_launch = false;  // may start before the previous kernel ends

  [[nodiscard]] bool has_cluster() const noexcept { return cluster.x != 0; }
  // The grid in blocks, as the driver takes it (validate() keeps each product in range).
  [[nodiscard]] Dim3 blocks() const noexcept {
    if (!has_cluster()) return grid;
    return {grid.x * cluster.x, grid.y * cluster.y, grid.z * cluster.z};
  }
  // Plain cuLaunchKernel suffices (no launch attributes needed).
  [[nodiscard]] bool is_simple() const noexcept {
    return !has_cluster() && !cooperative && !programmatic_dependent_launch;
  }
  // Checks the rules that need no device: non-zero dims, block <= 1024 threads, the grid's
  // and block's dimension limits (the grid's counted in blocks), at most 16 blocks a cluster.
  // Throws ValueError naming the rule and the value. Device limits (shared memory, the
  // cluster size a kernel may use) are checked at launch.
  void validate() const;
  [[nodiscard]] std::string describe() const;
};

}  // namespace nanocuda
