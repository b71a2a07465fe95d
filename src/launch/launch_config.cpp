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
  if (grid.x > 2147483647u) reject(*this, "grid x is at most 2^31-1");
  if (grid.y > 65535 || grid.z > 65535)
    reject(*this, "grid y and z are at most 65535, got " + text(grid));
  if (has_cluster()) {
    if (cluster.volume() == 0) reject(*this, "every cluster dimension must be at least 1");
    if (grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z)
      reject(*this, "the grid " + text(grid) + " must be a multiple of the cluster " +
                        text(cluster));
    if (cluster.volume() > 16)
      reject(*this, "a cluster has at most 16 blocks (8 portably), this one has " +
                        std::to_string(cluster.volume()));
  }
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
