// The checked raw launch: cuLaunchKernel for plain configs, cuLaunchKernelEx otherwise.
#include "nanocuda/launch/detail/launch_packed.h"

#include <string>

#include "nanocuda/driver/check.h"
#include "nanocuda/launch/detail/launch_context.h"

namespace nanocuda::detail {

namespace {

std::string describe_launch(const StreamRef& stream, const LaunchConfig& config,
                            const LaunchTarget& target) {
  return "kernel '" + std::string(target.name) + "' " + config.describe() + " on " +
         stream.describe();
}

void raise_shared_mem_limit(const StreamRef& stream, const LaunchConfig& config,
                            const LaunchTarget& target) {
  NANOCUDA_CALL(cuFuncSetAttribute,
                [&] {
                  return describe_launch(stream, config, target) +
                         ", raising the dynamic shared memory limit (device opt-in max: " +
                         std::to_string(stream.device().max_shared_memory_per_block_optin()) +
                         " bytes)";
                },
                target.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                static_cast<int>(config.shared_mem));
  *target.shared_mem_limit = config.shared_mem;
}

}  // namespace

void launch_packed(CUcontext context, StreamRef stream, const LaunchConfig& config,
                   const LaunchTarget& target, void** params) {
  make_launch_context_current(context);
  constexpr std::uint32_t kDefaultLimit = 48 * 1024;
  if (config.shared_mem > kDefaultLimit) [[unlikely]] {
    std::uint32_t unused = kDefaultLimit;
    LaunchTarget t = target;
    if (!t.shared_mem_limit) t.shared_mem_limit = &unused;
    if (config.shared_mem > *t.shared_mem_limit) raise_shared_mem_limit(stream, config, t);
  }
  const auto& api = driver();
  if (config.is_simple()) [[likely]] {
    CUresult rc = api.cuLaunchKernel(target.function, config.grid.x, config.grid.y,
                                     config.grid.z, config.block.x, config.block.y,
                                     config.block.z, config.shared_mem, stream.handle(), params,
                                     nullptr);
    detail::check(rc, "cuLaunchKernel", [&] { return describe_launch(stream, config, target); });
    return;
  }
  CUlaunchAttribute attrs[3];
  unsigned n = 0;
  if (config.has_cluster()) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = config.cluster.x;
    attrs[n].value.clusterDim.y = config.cluster.y;
    attrs[n].value.clusterDim.z = config.cluster.z;
    ++n;
  }
  if (config.cooperative) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n].value.cooperative = 1;
    ++n;
  }
  if (config.programmatic_dependent_launch) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  CUlaunchConfig c{};
  const Dim3 blocks = config.blocks();  // a cluster's grid counts clusters
  c.gridDimX = blocks.x;
  c.gridDimY = blocks.y;
  c.gridDimZ = blocks.z;
  c.blockDimX = config.block.x;
  c.blockDimY = config.block.y;
  c.blockDimZ = config.block.z;
  c.sharedMemBytes = config.shared_mem;
  c.hStream = stream.handle();
  c.attrs = attrs;
  c.numAttrs = n;
  CUresult rc = api.cuLaunchKernelEx(&c, target.function, params, nullptr);
  detail::check(rc, "cuLaunchKernelEx", [&] { return describe_launch(stream, config, target); });
}

void throw_typed_mismatch(std::string_view kernel, std::size_t index, std::size_t expected,
                          std::size_t given) {
  throw ValueError("kernel '" + std::string(kernel) + "', parameter " + std::to_string(index) +
                   ": expects " + std::to_string(expected) + " bytes, got " +
                   std::to_string(given) + " bytes");
}

void throw_typed_count(std::string_view kernel, std::size_t expected, std::size_t given) {
  throw TypeError("kernel '" + std::string(kernel) + "' takes " + std::to_string(expected) +
                  " arguments, got " + std::to_string(given));
}

}  // namespace nanocuda::detail
