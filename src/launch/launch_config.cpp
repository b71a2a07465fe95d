// Device-independent validation of launch configurations.
#include "nanocuda/launch/launch_config.h"

#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

std::string text(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

[[noreturn]] void reject(const LaunchConfig& c, const std::string& rule) {
  throw ValueError("LaunchConfig" + c.describe() + ": " + rule);
}

}  // namespace

void LaunchConfig::validate() const {
  if (grid.volume() == 0) reject(*this, "every grid dimension must be at least 1");
  if (block.volume() == 0) reject(*this, "every block dimension must be at least 1");
  if (block.volume() > 1024)
    reject(*this, "a block has at most 1024 threads, this one has " +
                      std::to_string(block.volume()));
  if (block.z > 64) reject(*this, "block z is at most 64, got " + std::to_string(block.z));
  if (has_cluster()) {
    if (cluster.volume() == 0) reject(*this, "every cluster dimension must be at least 1");
    if (cluster.volume() > 16)
      reject(*this, "a cluster has at most 16 blocks (8 portably), this one has " +
                        std::to_string(cluster.volume()));
  }
  // The driver's limits are on blocks: with clusters, grid × cluster (computed wide, so an
  // overflow is reported, not wrapped).
  const Dim3 c = has_cluster() ? cluster : Dim3{};
  const std::uint64_t bx = std::uint64_t{grid.x} * c.x, by = std::uint64_t{grid.y} * c.y,
                      bz = std::uint64_t{grid.z} * c.z;
  const std::string in_blocks = has_cluster() ? " blocks (grid × cluster)" : "";
  if (bx > 2147483647u) reject(*this, "grid x is at most 2^31-1" + in_blocks);
  if (by > 65535 || bz > 65535)
    reject(*this, "grid y and z are at most 65535" + in_blocks + ", got (" + std::to_string(bx) +
                      ", " + std::to_string(by) + ", " + std::to_string(bz) + ")");
}

std::string LaunchConfig::describe() const {
  std::string s = "(grid=" + text(grid) + ", block=" + text(block);
  if (shared_mem) s += ", shared_mem=" + std::to_string(shared_mem);
  if (has_cluster()) s += ", cluster=" + text(cluster);
  if (cooperative) s += ", cooperative";
  if (programmatic_dependent_launch) s += ", pdl";
  return s + ")";
}

}  // namespace nanocuda
