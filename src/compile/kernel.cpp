// Kernel: cached parameter layout and per-context functions, attributes and occupancy.
#include "nanocuda/compile/kernel.h"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

#include "nanocuda/core/any_context.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/compile/library.h"

namespace nanocuda {

struct Kernel::State {
  std::shared_ptr<const Library> library;
  CUkernel handle = nullptr;
  std::string name;
  ParamLayout layout;
  std::mutex mutex;
  // Few contexts per process: a vector beats a map here.
  std::vector<std::pair<CUcontext, CUfunction>> functions;
};

namespace {

ParamLayout query_layout(CUkernel kernel, const std::string& name, const std::string& what) {
  const auto& api = detail::driver();
  if (!detail::entry_point_available(api.cuKernelGetParamInfo))
    throw Error(CUDA_ERROR_NOT_SUPPORTED, "cuKernelGetParamInfo", what,
                "the installed driver is older than CUDA 12.4 and cannot report kernel "
                "parameter layouts");
  // The driver wants some context current for this query; any will do (the layout is the
  // same everywhere).
  detail::AnyContext context;
  ParamLayout layout;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    CUresult rc = api.cuKernelGetParamInfo(kernel, i, &offset, &size);
    if (rc == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    detail::check(rc, "cuKernelGetParamInfo", what);
    layout.params.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
  }
  // Parameter classes from the mangled name (none for extern "C" kernels): they let the
  // launch reject a float for a pointer, which the sizes alone cannot.
  std::vector<ParamClass> classes = param_classes_from_mangled_name(name);
  if (classes.size() == layout.params.size()) layout.classes = std::move(classes);
  return layout;
}

// "0x7f..." for messages about an adopted handle.
std::string handle_text(CUkernel handle) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", static_cast<void*>(handle));
  return text;
}

// The launch shape the cluster-occupancy queries take (no stream: they only read it).
CUlaunchConfig occupancy_config(std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                                std::size_t dynamic_shared_memory) {
  CUlaunchConfig config{};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = block[0];
  config.blockDimY = block[1];
  config.blockDimZ = block[2];
  config.sharedMemBytes = static_cast<unsigned>(dynamic_shared_memory);
  return config;
}

}  // namespace

Kernel::Kernel(std::shared_ptr<const Library> library, CUkernel handle, std::string name)
    : state_(std::make_shared<State>()) {
  state_->library = std::move(library);
  state_->handle = handle;
  state_->name = std::move(name);
  state_->layout = query_layout(handle, state_->name, describe());
}

CUkernel Kernel::handle() const noexcept { return state_->handle; }
const std::string& Kernel::name() const noexcept { return state_->name; }
const std::shared_ptr<const Library>& Kernel::library() const noexcept { return state_->library; }
const ParamLayout& Kernel::param_layout() const noexcept { return state_->layout; }

Kernel Kernel::from_handle(CUkernel handle, std::shared_ptr<const Library> library) {
  if (handle == nullptr) throw ValueError("Kernel::from_handle", "the handle is 0 (NULL), not a CUkernel");
  const char* name = nullptr;
  NANOCUDA_CALL(cuKernelGetName, [&] { return "Kernel::from_handle(" + handle_text(handle) + ")"; },
                &name, handle);
  if (!library) {  // a kernel of a library loaded here keeps it loaded, as the original did
    const auto& api = detail::driver();
    CUlibrary lib = nullptr;
    if (detail::entry_point_available(api.cuKernelGetLibrary) &&
        api.cuKernelGetLibrary(&lib, handle) == CUDA_SUCCESS && lib)
      library = Library::find(lib);
  }
  return Kernel(std::move(library), handle, name ? name : "");
}

CUlibrary Kernel::driver_library() const {
  const auto& api = detail::driver();
  if (!detail::entry_point_available(api.cuKernelGetLibrary)) return nullptr;
  CUlibrary lib = nullptr;
  NANOCUDA_CALL(cuKernelGetLibrary, [&] { return describe(); }, &lib, state_->handle);
  return lib;
}

std::string Kernel::describe() const {
  if (!state_->library) return "Kernel " + state_->name + " (adopted handle " + handle_text(state_->handle) + ")";
  return "Kernel " + state_->name + " in " + state_->library->description();
}

CUfunction Kernel::function(const Context& ctx) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (const auto& [c, f] : state_->functions)
    if (c == ctx.handle()) return f;
  CurrentContext guard(ctx);
  CUfunction fn = nullptr;
  NANOCUDA_CALL(cuKernelGetFunction, [&] { return describe(); }, &fn, state_->handle);
  state_->functions.emplace_back(ctx.handle(), fn);
  return fn;
}

int Kernel::attribute(CUfunction_attribute attr, const Device& device) const {
  int value = 0;
  NANOCUDA_CALL(cuKernelGetAttribute, [&] { return describe(); }, &value, attr, state_->handle,
                device.handle());
  return value;
}

KernelAttributes Kernel::attributes(const Device& device) const {
  KernelAttributes a;
  a.num_registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, device);
  a.shared_size_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, device);
  a.max_dynamic_shared_size_bytes = attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, device);
  a.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device);
  a.local_size_bytes = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, device);
  a.const_size_bytes = attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, device);
  a.ptx_version = attribute(CU_FUNC_ATTRIBUTE_PTX_VERSION, device);
  a.binary_version = attribute(CU_FUNC_ATTRIBUTE_BINARY_VERSION, device);
  a.preferred_shared_memory_carveout =
      attribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, device);
  a.max_shared_memory_per_block_optin =
      device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  a.cache_mode_ca = attribute(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, device) != 0;
  a.cluster_size_must_be_set = attribute(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, device) != 0;
  a.required_cluster_width = attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, device);
  a.required_cluster_height = attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, device);
  a.required_cluster_depth = attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, device);
  a.non_portable_cluster_size_allowed =
      attribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, device) != 0;
  a.cluster_scheduling_policy_preference =
      attribute(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, device);
  return a;
}

void Kernel::set_max_dynamic_shared_memory(int bytes, const Device& device) const {
  if (bytes < 0)
    throw ValueError("Kernel::set_max_dynamic_shared_memory", "bytes must be >= 0, got " + std::to_string(bytes));
  NANOCUDA_CALL(cuKernelSetAttribute, [&] { return describe(); },
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes, state_->handle,
                device.handle());
}

void Kernel::set_preferred_shared_memory_carveout(int percent, const Device& device) const {
  NANOCUDA_CALL(cuKernelSetAttribute, [&] { return describe(); },
                CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent, state_->handle,
                device.handle());
}

int Kernel::max_active_blocks_per_multiprocessor(int block_size, std::size_t dynamic_shared_memory,
                                                 const Device& device) const {
  if (block_size < 1)
    throw ValueError("Kernel::max_active_blocks_per_multiprocessor", "block_size must be >= 1, got " +
                     std::to_string(block_size));
  CUfunction fn = function(*device.context());
  CurrentContext guard(*device.context());
  int blocks = 0;
  NANOCUDA_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessor, [&] { return describe(); }, &blocks,
                fn, block_size, dynamic_shared_memory);
  return blocks;
}

std::pair<int, int> Kernel::max_potential_block_size(std::size_t dynamic_shared_memory,
                                                     int block_size_limit,
                                                     const Device& device) const {
  if (block_size_limit < 0)  // 0: no limit
    throw ValueError("Kernel::max_potential_block_size", "block_size_limit must be >= 0, got " +
                     std::to_string(block_size_limit));
  CUfunction fn = function(*device.context());
  CurrentContext guard(*device.context());
  int min_grid = 0, block = 0;
  NANOCUDA_CALL(cuOccupancyMaxPotentialBlockSize, [&] { return describe(); }, &min_grid, &block,
                fn, nullptr, dynamic_shared_memory, block_size_limit);
  return {min_grid, block};
}

std::pair<int, int> Kernel::max_potential_block_size_for(CUoccupancyB2DSize block_to_smem, int block_size_limit,
                                                         const Device& device) const {
  if (block_to_smem == nullptr)
    throw ValueError("Kernel::max_potential_block_size_for", "the block-size-to-shared-memory callback is null");
  if (block_size_limit < 0)  // 0: no limit
    throw ValueError("Kernel::max_potential_block_size_for", "block_size_limit must be >= 0, got " +
                     std::to_string(block_size_limit));
  CUfunction fn = function(*device.context());
  CurrentContext guard(*device.context());
  int min_grid = 0, block = 0;
  NANOCUDA_CALL(cuOccupancyMaxPotentialBlockSize, [&] { return describe(); }, &min_grid, &block,
                fn, block_to_smem, 0, block_size_limit);
  return {min_grid, block};
}

std::size_t Kernel::available_dynamic_shared_memory_per_block(int blocks_per_multiprocessor,
                                                              int block_size, const Device& device) const {
  CUfunction fn = function(*device.context());
  CurrentContext guard(*device.context());
  std::size_t bytes = 0;
  NANOCUDA_CALL(cuOccupancyAvailableDynamicSMemPerBlock, [&] { return describe(); }, &bytes, fn,
                blocks_per_multiprocessor, block_size);
  return bytes;
}

int Kernel::max_potential_cluster_size(std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                                       std::size_t dynamic_shared_memory, const Device& device) const {
  CUfunction fn = function(*device.context());
  CurrentContext guard(*device.context());
  CUlaunchConfig config = occupancy_config(grid, block, dynamic_shared_memory);
  int size = 0;
  NANOCUDA_CALL(cuOccupancyMaxPotentialClusterSize, [&] { return describe(); }, &size, fn, &config);
  return size;
}

int Kernel::max_active_clusters(std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                                std::array<unsigned, 3> cluster, std::size_t dynamic_shared_memory,
                                const Device& device) const {
  CUfunction fn = function(*device.context());
  CurrentContext guard(*device.context());
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = cluster[0];
  attr.value.clusterDim.y = cluster[1];
  attr.value.clusterDim.z = cluster[2];
  // The driver takes the grid in blocks.
  CUlaunchConfig config = occupancy_config({grid[0] * cluster[0], grid[1] * cluster[1], grid[2] * cluster[2]},
                                           block, dynamic_shared_memory);
  config.attrs = &attr;
  config.numAttrs = 1;
  int clusters = 0;
  NANOCUDA_CALL(cuOccupancyMaxActiveClusters, [&] { return describe(); }, &clusters, fn, &config);
  return clusters;
}

}  // namespace nanocuda
