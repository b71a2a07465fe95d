// Loads NVRTC, nvJitLink and libNVVM on first use and fills their entry-point tables with dlsym.
#include "nanocuda/compile/nvrtc_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <mutex>
#include <optional>

#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/library_search.h"
#include "nanocuda/driver/driver_version.h"

namespace nanocuda::detail {

namespace {

// One loaded table or the remembered failure message.
template <class Api>
struct Slot {
  std::once_flag once;
  std::optional<Api> api;
  std::string failure;
};

template <class Api, class Fill>
const Api& load_once(Slot<Api>& slot, Fill fill) {
  std::call_once(slot.once, [&] {
    try {
      slot.api.emplace();
      fill(*slot.api);
    } catch (const std::exception& e) {
      slot.api.reset();
      slot.failure = e.what();
    }
  });
  if (!slot.api) throw ToolkitNotFoundError(slot.failure);
  return *slot.api;
}

Slot<NvrtcApi> g_nvrtc;
Slot<NvJitLinkApi> g_nvjitlink;
Slot<NvvmApi> g_nvvm;

// A probe for optional libraries: a path that cannot be checked is one we cannot load either,
// so the search goes on (and the final ToolkitNotFoundError lists what was tried).
bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && !ec;
}

// NVRTC opens libnvrtc-builtins.so.<major>.<minor> by bare name when it compiles, and how the
// loader resolves that depends on NVRTC's RUNPATH and the process's LD_LIBRARY_PATH; in a venv
// with the pip wheels the compile then failed with "failed to open libnvrtc-builtins". Loading
// it first from NVRTC's own folder makes NVRTC's later dlopen find it by its soname. A failure
// is kept (the loader's reason) and added to a compile error that mentions the builtins.
void preload_builtins(NvrtcApi& api, int major, int minor) {
  namespace fs = std::filesystem;
  const std::string name = "libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor);
  std::error_code ec;
  const fs::path given = fs::path(api.path).parent_path();
  const fs::path real = fs::canonical(api.path, ec).parent_path();  // empty on error: skipped
  for (const fs::path& dir : {given, real}) {
    if (dir.empty() || !is_file((dir / name).string())) continue;
    const std::string path = (dir / name).string();
    if (::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return;
    const char* why = ::dlerror();
    api.builtins_error = path + ": " + (why ? why : "dlopen failed");
    return;
  }
}

}  // namespace

const NvrtcApi& nvrtc() {
  return load_once(g_nvrtc, [](NvrtcApi& api) {
    LoadedLibrary lib = load_toolkit_library("NVRTC (libnvrtc.so)", "libnvrtc.so", "NANOCUDA_NVRTC",
                                             "nvidia-cuda-nvrtc", installed_driver_version() / 1000);
    std::string missing;
#define NANOCUDA_LOAD_POINTER(name)                                                  \
  api.name = reinterpret_cast<decltype(&::name)>(::dlsym(lib.handle, #name));        \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
    NANOCUDA_NVRTC_ENTRY_POINTS(NANOCUDA_LOAD_POINTER)
#undef NANOCUDA_LOAD_POINTER
    if (!missing.empty())
      throw ToolkitNotFoundError(lib.path + " lacks NVRTC entry points: " + missing +
                                 " (nanocuda needs NVRTC 12.4 or newer)");
    int major = 0, minor = 0;
    api.nvrtcVersion(&major, &minor);
    api.version = major * 1000 + minor * 10;
    api.path = lib.path;
    preload_builtins(api, major, minor);
    // Headers of the NVRTC's own CUDA major: CUDA 13's cuda.h or libcu++ with NVRTC 12 fails.
    api.include = toolkit_include_dir(lib.path, major);
    api.cccl_include = cccl_include_dir(lib.path, major);
  });
}

const NvJitLinkApi& nvjitlink() {
  return load_once(g_nvjitlink, [](NvJitLinkApi& api) {
    LoadedLibrary lib =
        load_toolkit_library("nvJitLink (libnvJitLink.so)", "libnvJitLink.so", "NANOCUDA_NVJITLINK",
                             "nvidia-nvjitlink", installed_driver_version() / 1000);
    // nvJitLinkVersion is unversioned (12.3+); the floor is 12.4, so its absence is too old.
    using VersionFn = nvJitLinkResult (*)(unsigned int*, unsigned int*);
    auto version = reinterpret_cast<VersionFn>(::dlsym(lib.handle, "nvJitLinkVersion"));
    unsigned major = 0, minor = 0;
    if (!version || version(&major, &minor) != NVJITLINK_SUCCESS)
      throw ToolkitNotFoundError(lib.path + " has no nvJitLinkVersion: nanocuda needs nvJitLink 12.4 or newer");
    api.version = static_cast<int>(major * 1000 + minor * 10);
    // Try the library's own suffix first, then older minors of the same major: a 13.x library
    // may keep exporting _13_0 only, a 12.9 one exports _12_0 .. _12_9.
    std::string missing;
    for (int m = static_cast<int>(minor); m >= 0 && api.suffix.empty(); --m) {
      const std::string suffix = "_" + std::to_string(major) + "_" + std::to_string(m);
      missing.clear();
#define NANOCUDA_LOAD_POINTER(name, symbol)                                                     \
  api.name = reinterpret_cast<decltype(&::symbol)>(::dlsym(lib.handle, ("__" #name + suffix).c_str())); \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + "__" #name + suffix;
      NANOCUDA_NVJITLINK_ENTRY_POINTS(NANOCUDA_LOAD_POINTER)
#undef NANOCUDA_LOAD_POINTER
      if (missing.empty()) api.suffix = suffix;
    }
    if (api.suffix.empty())
      throw ToolkitNotFoundError(lib.path + " (nvJitLink " + std::to_string(major) + "." +
                                 std::to_string(minor) + ") lacks nvJitLink entry points: " + missing);
    api.path = lib.path;
  });
}

const NvvmApi& nvvm() {
  return load_once(g_nvvm, [](NvvmApi& api) {
    // The toolkit keeps libNVVM in nvvm/lib64, outside the usual library folders.
    LoadedLibrary lib;
    if (const char* env = std::getenv("NANOCUDA_NVVM"); !(env && *env)) {
      for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* root = std::getenv(var); root && *root && !lib.handle)
          if (std::string p = std::string(root) + "/nvvm/lib64/libnvvm.so"; is_file(p))
            if (void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) lib = {h, p};
      if (!lib.handle && is_file("/usr/local/cuda/nvvm/lib64/libnvvm.so"))
        if (void* h = ::dlopen("/usr/local/cuda/nvvm/lib64/libnvvm.so", RTLD_NOW | RTLD_LOCAL))
          lib = {h, "/usr/local/cuda/nvvm/lib64/libnvvm.so"};
    }
    if (!lib.handle)
      lib = load_toolkit_library("libNVVM (libnvvm.so, needed for Program(code_type=\"nvvm\"))",
                                 "libnvvm.so", "NANOCUDA_NVVM", "nvidia-nvvm");
    std::string missing;
#define NANOCUDA_LOAD_POINTER(name)                                                  \
  api.name = reinterpret_cast<decltype(&::name)>(::dlsym(lib.handle, #name));        \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
    NANOCUDA_NVVM_ENTRY_POINTS(NANOCUDA_LOAD_POINTER)
#undef NANOCUDA_LOAD_POINTER
    if (!missing.empty()) throw ToolkitNotFoundError(lib.path + " lacks libNVVM entry points: " + missing);
    api.path = lib.path;
    // libdevice sits in <root>/nvvm/libdevice; the library in <root>/nvvm/lib64 or <root>/lib.
    std::filesystem::path dir = std::filesystem::path(lib.path).parent_path();
    if (dir.empty()) dir = ".";
    for (const char* rel : {"../libdevice/libdevice.10.bc", "../nvvm/libdevice/libdevice.10.bc"})
      if (std::string path = (dir / rel).string(); is_file(path)) {
        api.libdevice = path;
        break;
      }
  });
}

}  // namespace nanocuda::detail
