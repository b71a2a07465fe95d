// A kernel in a loaded Library: attributes, occupancy, parameter layout, per-context handles.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "nanocuda/core/device.h"
#include "nanocuda/compile/param_layout.h"

namespace nanocuda {

class Library;
class Launcher;
class StreamRef;
struct LaunchConfig;

// A snapshot of the attributes launches and tuning care about, for one device.
struct KernelAttributes {
  int num_registers = 0;
  int shared_size_bytes = 0;          // static shared memory
  int max_dynamic_shared_size_bytes = 0;
  int max_threads_per_block = 0;
  int local_size_bytes = 0;
  int const_size_bytes = 0;
  int ptx_version = 0;                // e.g. 90 for PTX ISA targeting sm_90
  int binary_version = 0;             // e.g. 90
  int preferred_shared_memory_carveout = 0;
  int max_shared_memory_per_block_optin = 0;  // device limit for dynamic + static
  bool cache_mode_ca = false;         // compiled with -Xptxas --dlcm=ca (global loads cached in L1)
  bool cluster_size_must_be_set = false;
  int required_cluster_width = 0;     // compile-time cluster shape (__cluster_dims__), 0 = none
  int required_cluster_height = 0;
  int required_cluster_depth = 0;
  bool non_portable_cluster_size_allowed = false;
  int cluster_scheduling_policy_preference = 0;  // CUclusterSchedulingPolicy
};

// Cheap to copy: copies share the handle, the cached parameter layout and the cached
// per-context CUfunctions, and keep the Library loaded.
class Kernel {
 public:
  // Made by Library::get_kernel; computes the parameter layout once, here.
  Kernel(std::shared_ptr<const Library> library, CUkernel handle, std::string name);
  // Adopts a CUkernel handle made elsewhere (cuda.core's Kernel.from_handle): its name is read
  // from the driver; `library` (null: the Library loaded here that the driver says owns the
  // kernel, if any) is kept loaded for as long as the Kernel lives.
  [[nodiscard]] static Kernel from_handle(CUkernel handle, std::shared_ptr<const Library> library = nullptr);
  // The CUlibrary the driver says this kernel belongs to (cuKernelGetLibrary); null where the
  // driver (before CUDA 12.5) cannot say.
  [[nodiscard]] CUlibrary driver_library() const;

  [[nodiscard]] CUkernel handle() const noexcept;
  // The name it was looked up by (extern "C" or mangled).
  [[nodiscard]] const std::string& name() const noexcept;
  [[nodiscard]] const std::shared_ptr<const Library>& library() const noexcept;
  // Offset and size of each parameter (cuKernelGetParamInfo), computed once.
  [[nodiscard]] const ParamLayout& param_layout() const noexcept;
  // The CUfunction of this kernel in `ctx` (cuKernelGetFunction with ctx current),
  // cached per context.
  [[nodiscard]] CUfunction function(const Context& ctx) const;

  // One attribute on `device` (cuKernelGetAttribute).
  [[nodiscard]] int attribute(CUfunction_attribute attr, const Device& device = Device()) const;
  [[nodiscard]] KernelAttributes attributes(const Device& device = Device()) const;
  // Allows up to `bytes` of dynamic shared memory per block (needed above 48 KiB).
  void set_max_dynamic_shared_memory(int bytes, const Device& device = Device()) const;
  // Preferred L1/shared split, in percent of the maximum shared memory (-1 = no preference).
  void set_preferred_shared_memory_carveout(int percent, const Device& device = Device()) const;

  // Occupancy (computed in the device's primary context).
  [[nodiscard]] int max_active_blocks_per_multiprocessor(int block_size,
                                                         std::size_t dynamic_shared_memory = 0,
                                                         const Device& device = Device()) const;
  // (min_grid_size, block_size) maximising occupancy (cuOccupancyMaxPotentialBlockSize).
  [[nodiscard]] std::pair<int, int> max_potential_block_size(
      std::size_t dynamic_shared_memory = 0, int block_size_limit = 0,
      const Device& device = Device()) const;
  // The same with the dynamic shared memory a function of the block size: `block_to_smem`
  // is a C callback size_t(int block_size) (a numba cfunc, a ctypes function).
  [[nodiscard]] std::pair<int, int> max_potential_block_size_for(CUoccupancyB2DSize block_to_smem,
                                                                 int block_size_limit = 0,
                                                                 const Device& device = Device()) const;
  // Dynamic shared memory a block may use when `blocks_per_multiprocessor` blocks of
  // `block_size` threads share an SM (cuOccupancyAvailableDynamicSMemPerBlock).
  [[nodiscard]] std::size_t available_dynamic_shared_memory_per_block(
      int blocks_per_multiprocessor, int block_size, const Device& device = Device()) const;
  // The largest cluster this kernel can launch with in a grid of `grid` blocks of `block`
  // threads (cuOccupancyMaxPotentialClusterSize).
  [[nodiscard]] int max_potential_cluster_size(std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                                               std::size_t dynamic_shared_memory = 0,
                                               const Device& device = Device()) const;
  // Clusters of `cluster` blocks of `block` threads that can be co-resident
  // (cuOccupancyMaxActiveClusters) in a grid of `grid` clusters (LaunchConfig's rule).
  [[nodiscard]] int max_active_clusters(std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                                        std::array<unsigned, 3> cluster,
                                        std::size_t dynamic_shared_memory = 0,
                                        const Device& device = Device()) const;

  // Binds this kernel to `config` and `stream`: a Launcher that takes only the kernel's
  // arguments. Declared here, defined by the launch layer (nanocuda/launch/launcher.h).
  [[nodiscard]] Launcher bind(const LaunchConfig& config, StreamRef stream) const;

  // "Kernel saxpy in <library description>".
  [[nodiscard]] std::string describe() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace nanocuda
