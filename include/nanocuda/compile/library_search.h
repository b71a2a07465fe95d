// Finds CUDA toolkit libraries (NVRTC, nvJitLink) and headers at run time, in one documented order.
#pragma once

#include <string>
#include <vector>

namespace nanocuda::detail {

// Extra directories searched after the toolkit and before the build machine's toolkit;
// the Python layer adds the NVIDIA pip wheel folders found on sys.path here.
void add_library_search_dirs(const std::vector<std::string>& dirs);
std::vector<std::string> library_search_dirs_extra();

// The folder holding nanocuda's kernel-side headers (`#include <nanocuda/device/tma.cuh>`),
// added to every Program's include path: $NANOCUDA_INCLUDE_DIR, else the one registered
// (the Python package registers its installed copy), else the source tree's.
void set_device_include_dir(const std::string& dir);
std::string device_include_dir();

// The directories searched for a toolkit library, in order:
//   1. $CUDA_HOME/lib64, $CUDA_HOME/lib, $CUDA_PATH/lib64, $CUDA_PATH/lib,
//      /usr/local/cuda/lib64, /usr/local/cuda/lib
//   2. the NVIDIA pip wheels next to this process's Python: nvidia/cu13/lib,
//      nvidia/cuda_nvrtc/lib, nvidia/nvjitlink/lib (added by the Python layer), and any
//      added with add_library_search_dirs()
//   3. the toolkit nanocuda was built against (NANOCUDA_TOOLKIT_LIBRARY_DIR)
//   4. the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig)
// An explicit $<env_var> path is tried before all of these.
std::vector<std::string> library_search_dirs();

// dlopens the first of `stems` ("libnvrtc.so") found, as `stem` + ".<major>" or any
// versioned suffix, or plain. Throws CompileError-free std::runtime_error listing every
// place looked when nothing loads. `what` names the library for the message.
struct LoadedLibrary {
  void* handle = nullptr;
  std::string path;
};
LoadedLibrary load_toolkit_library(const char* what, const char* stem, const char* env_var);

// The toolkit include directory (holding cuda.h) matching the loaded NVRTC: the same
// search as for libraries, with lib64/lib replaced by include; empty if none has cuda.h.
std::string toolkit_include_dir(const std::string& library_path);

}  // namespace nanocuda::detail
