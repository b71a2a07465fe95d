// Finds NVRTC and nvJitLink: explicit path, toolkit, pip wheels, build toolkit, then the loader.
#include "nanocuda/compile/library_search.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "nanocuda/compile/compile_error.h"

namespace nanocuda::detail {

namespace {

std::mutex g_dirs_mutex;
std::vector<std::string> g_extra_dirs;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Splits CMake's ';'-separated lists (CUDAToolkit_INCLUDE_DIRS may hold several).
void append_list(std::vector<std::string>& out, const std::string& list) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(';', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
}

std::vector<std::string> toolkit_roots() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  return roots;
}

// Candidates for `stem` in `dir`: stem.<major> files first (newest first), then plain stem.
std::vector<std::string> candidates_in(const std::string& dir, const std::string& stem) {
  std::vector<std::string> versioned;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      // libnvrtc.so.13, not libnvrtc.so.13.0.88 twice nor libnvrtc-builtins.
      if (name.rfind(stem + ".", 0) == 0) versioned.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(versioned.begin(), versioned.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a > b;
  });
  if (exists(dir + "/" + stem)) versioned.push_back(dir + "/" + stem);
  return versioned;
}

}  // namespace

void add_library_search_dirs(const std::vector<std::string>& dirs) {
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  for (const auto& d : dirs)
    if (std::find(g_extra_dirs.begin(), g_extra_dirs.end(), d) == g_extra_dirs.end())
      g_extra_dirs.push_back(d);
}

namespace {
std::string g_device_include_dir;
}  // namespace

void set_device_include_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  g_device_include_dir = dir;
}

std::string device_include_dir() {
  if (const char* env = std::getenv("NANOCUDA_INCLUDE_DIR"); env && *env) return env;
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  if (!g_device_include_dir.empty()) return g_device_include_dir;
#ifdef NANOCUDA_SOURCE_INCLUDE_DIR
  return NANOCUDA_SOURCE_INCLUDE_DIR;
#else
  return {};
#endif
}

std::vector<std::string> library_search_dirs_extra() {
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  return g_extra_dirs;
}

std::vector<std::string> library_search_dirs() {
  std::vector<std::string> dirs;
  for (const auto& root : toolkit_roots()) {
    dirs.push_back(root + "/lib64");
    dirs.push_back(root + "/lib");
  }
  for (const auto& d : library_search_dirs_extra()) dirs.push_back(d);
#ifdef NANOCUDA_TOOLKIT_LIBRARY_DIR
  append_list(dirs, NANOCUDA_TOOLKIT_LIBRARY_DIR);
#endif
  return dirs;
}

LoadedLibrary load_toolkit_library(const char* what, const char* stem, const char* env_var) {
  std::string looked;
  auto note = [&](const std::string& where, const char* why) {
    looked += "\n  " + where + (why ? std::string(" (") + why + ")" : std::string());
  };
  auto try_open = [&](const std::string& path) -> void* {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) note(path, ::dlerror());
    return h;
  };
  if (const char* explicit_path = std::getenv(env_var); explicit_path && *explicit_path) {
    if (void* h = try_open(explicit_path)) return {h, explicit_path};
  } else {
    note(std::string("$") + env_var, "not set");
  }
  for (const auto& dir : library_search_dirs()) {
    auto found = candidates_in(dir, stem);
    if (found.empty()) note(dir + "/" + stem + "*", "not found");
    for (const auto& path : found)
      if (void* h = try_open(path)) return {h, path};
  }
  // Last, whatever the loader finds (LD_LIBRARY_PATH, ldconfig cache).
  if (void* h = ::dlopen(stem, RTLD_NOW | RTLD_LOCAL)) {
    std::string path = stem;
    if (link_map* lm = nullptr; ::dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
      path = lm->l_name;
    return {h, path};
  }
  note(std::string(stem) + " via the dynamic loader", "not found");
  throw ToolkitNotFoundError(std::string(what) + " not found. Install the CUDA toolkit or the "
                             "NVIDIA pip wheel (pip install nvidia-cuda-nvrtc / cuda-toolkit), "
                             "or set $" + env_var + " to the library's path. Looked in:" + looked);
}

std::string toolkit_include_dir(const std::string& library_path) {
  std::vector<std::string> dirs;
  if (auto slash = library_path.rfind('/'); slash != std::string::npos) {
    std::string lib_dir = library_path.substr(0, slash);
    dirs.push_back(lib_dir + "/../include");
    // Wheels: nvidia/cuda_nvrtc/lib -> nvidia/cuda_runtime/include holds cuda.h.
    dirs.push_back(lib_dir + "/../../cuda_runtime/include");
  }
  for (const auto& root : toolkit_roots()) dirs.push_back(root + "/include");
#ifdef NANOCUDA_TOOLKIT_INCLUDE_DIR
  append_list(dirs, NANOCUDA_TOOLKIT_INCLUDE_DIR);
#endif
  for (const auto& d : dirs) {
    if (!exists(d + "/cuda.h")) continue;
    char resolved[PATH_MAX];
    return ::realpath(d.c_str(), resolved) ? std::string(resolved) : d;
  }
  return {};
}

}  // namespace nanocuda::detail
