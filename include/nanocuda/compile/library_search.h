// Finds NVRTC, nvJitLink and the CUDA headers at run time (toolkit or pip wheels), in one documented order.
#pragma once

#include <string>
#include <vector>

namespace nanocuda::detail {

// Extra directories searched after the toolkit and before the build machine's toolkit;
// the Python layer adds the NVIDIA pip wheel folders found on sys.path here.
void add_library_search_dirs(const std::vector<std::string>& dirs);
std::vector<std::string> library_search_dirs_extra();
// Likewise for headers: the wheels' include folders (nvidia/cu13/include), searched for
// cuda.h and cccl/cuda/std after the ones next to the loaded NVRTC and the toolkit's.
void add_include_search_dirs(const std::vector<std::string>& dirs);
std::vector<std::string> include_search_dirs_extra();

// The folder holding nanocuda's kernel-side headers (`#include <nanocuda/device/tma.cuh>`),
// added to every Program's include path: $NANOCUDA_INCLUDE_DIR, else the one registered
// (the Python package registers its installed copy), else the source tree's, else the
// `cmake --install` prefix's.
void set_device_include_dir(const std::string& dir);
std::string device_include_dir();

// The directories searched for a toolkit library, in order:
//   1. $CUDA_HOME/lib64, $CUDA_HOME/lib, $CUDA_PATH/lib64, $CUDA_PATH/lib,
//      /usr/local/cuda/lib64, /usr/local/cuda/lib
//   2. the NVIDIA pip wheels next to this process's Python: nvidia/cu13/lib,
//      nvidia/cuda_nvrtc/lib, nvidia/nvjitlink/lib (added by the Python layer), and any
//      added with add_library_search_dirs()
//   3. the toolkit nanocuda was built against (NANOCUDA_TOOLKIT_LIBRARY_DIR), if it was
//      built against one rather than the pip headers
//   4. the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig)
// An explicit $<env_var> path is tried before all of these; $<env_var>=none finds nothing.
std::vector<std::string> library_search_dirs();

// dlopens `stem` ("libnvrtc.so") found as `stem` + ".<major>" or any versioned suffix, or
// plain. With several found, those of the driver's major `driver_major` go first, then older
// majors, then unversioned names, then newer majors (0: no driver, search order only). Throws ToolkitNotFoundError listing every place looked, and
// naming the pip package that provides it, when nothing loads. `what` names the library.
struct LoadedLibrary {
  void* handle = nullptr;
  std::string path;
};
LoadedLibrary load_toolkit_library(const char* what, const char* stem, const char* env_var,
                                   const char* pip_package, int driver_major = 0);

// The include directory holding cuda.h (and cuda_fp16.h, ...) to pair with the loaded NVRTC:
// <library>/../include (toolkit and CUDA 13 wheels), the CUDA 12 wheels' cuda_runtime,
// $CUDA_HOME/$CUDA_PATH//usr/local/cuda include, the registered wheel include folders, the
// build toolkit's; empty if none has cuda.h. Folders whose cuda.h is of another CUDA major
// than `cuda_major` (the NVRTC's; 0: any) are passed over.
std::string toolkit_include_dir(const std::string& library_path, int cuda_major = 0);
// The folder that holds cuda/std/ (libcu++, for <cuda/std/cstdint>), searched in the same
// folders (their cccl/ subfolder first) and likewise of `cuda_major`; empty if none has it.
std::string cccl_include_dir(const std::string& library_path, int cuda_major = 0);
// False when `dir` holds a cuda.h or libcu++ of another CUDA major than `cuda_major`.
bool include_dir_fits(const std::string& dir, int cuda_major);

}  // namespace nanocuda::detail
