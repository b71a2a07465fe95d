// Finds NVRTC, nvJitLink and the CUDA headers (std::filesystem): explicit path, toolkit, pip wheels, build toolkit, loader.
#include "nanocuda/compile/library_search.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <system_error>

#include "nanocuda/compile/compile_error.h"

namespace nanocuda::detail {

namespace fs = std::filesystem;

namespace {

std::mutex g_dirs_mutex;
std::vector<std::string> g_extra_dirs;
std::vector<std::string> g_extra_include_dirs;

// Whether `path` exists; a path that cannot be checked (no permission, a broken mount)
// counts as absent, and the reason is kept in `error` for the "Looked in" list.
bool present(const fs::path& path, std::string* error = nullptr) {
  std::error_code ec;
  bool found = fs::exists(path, ec);
  if (ec && error) *error = ec.message();
  return found;
}

// Splits CMake's ';'-separated lists (CUDAToolkit_INCLUDE_DIRS may hold several). Unused in a
// build with no toolkit (cuda.h from pip), which defines no toolkit folders.
[[maybe_unused]] void append_list(std::vector<std::string>& out, const std::string& list) {
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
// A folder that exists but cannot be listed is reported in `error`.
std::vector<std::string> candidates_in(const std::string& dir, const std::string& stem,
                                       std::string& error) {
  std::vector<std::string> versioned;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    // libnvrtc.so.13, not libnvrtc.so.13.0.88 twice nor libnvrtc-builtins.
    if (name.rfind(stem + ".", 0) == 0) versioned.push_back((fs::path(dir) / name).string());
  }
  if (ec && ec != std::errc::no_such_file_or_directory) error = ec.message();
  std::sort(versioned.begin(), versioned.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a > b;
  });
  const fs::path plain = fs::path(dir) / stem;
  if (present(plain, &error)) versioned.push_back(plain.string());
  return versioned;
}

}  // namespace

namespace {
void add_unique(std::vector<std::string>& list, const std::vector<std::string>& dirs) {
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  for (const auto& d : dirs)
    if (std::find(list.begin(), list.end(), d) == list.end()) list.push_back(d);
}
}  // namespace

void add_library_search_dirs(const std::vector<std::string>& dirs) { add_unique(g_extra_dirs, dirs); }

void add_include_search_dirs(const std::vector<std::string>& dirs) {
  add_unique(g_extra_include_dirs, dirs);
}

std::vector<std::string> include_search_dirs_extra() {
  std::lock_guard<std::mutex> lock(g_dirs_mutex);
  return g_extra_include_dirs;
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
  // A C++ program: the source tree it was built from, else where `cmake --install` put them.
#ifdef NANOCUDA_SOURCE_INCLUDE_DIR
  if (present(fs::path(NANOCUDA_SOURCE_INCLUDE_DIR) / "nanocuda/device")) return NANOCUDA_SOURCE_INCLUDE_DIR;
#endif
#ifdef NANOCUDA_INSTALL_INCLUDE_DIR
  if (present(fs::path(NANOCUDA_INSTALL_INCLUDE_DIR) / "nanocuda/device")) return NANOCUDA_INSTALL_INCLUDE_DIR;
#endif
  return {};
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

namespace {

// The major version in a versioned file name: 12 for libnvrtc.so.12 or libnvrtc.so.12.9.86;
// 0 for the plain name.
int major_of(const std::string& path, const std::string& stem) {
  const std::string name = fs::path(path).filename().string();
  if (name.size() <= stem.size() + 1) return 0;
  return std::atoi(name.c_str() + stem.size() + 1);
}

// Where a candidate of major `major` goes with a driver of `driver_major`: the driver's own
// major first, then older ones (newest first: an older NVRTC's code runs on a newer driver),
// then unversioned names, then newer majors (their code does not load on this driver).
int rank(int major, int driver_major) {
  if (driver_major == 0) return 0;  // no driver: keep the search order
  if (major == driver_major) return 0;
  if (major == 0) return 2 * 100;
  if (major < driver_major) return 100 + (driver_major - major);
  return 3 * 100 + major;
}

}  // namespace

LoadedLibrary load_toolkit_library(const char* what, const char* stem, const char* env_var,
                                   const char* pip_package, int driver_major) {
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
    // "none": act as if the library were absent (to test prebuilt kernels where it is installed).
    if (std::string(explicit_path) == "none")
      throw ToolkitNotFoundError(std::string(what) + " not found: disabled by $" + env_var + "=none");
    if (void* h = try_open(explicit_path)) return {h, explicit_path};
  } else {
    note(std::string("$") + env_var, "not set");
  }
  // Every candidate in search order, then (stable) by fit with the driver's major, so with
  // CUDA 12 and 13 packages both installed a 12.x driver gets CUDA 12's library.
  std::vector<std::string> all;
  for (const auto& dir : library_search_dirs()) {
    std::string error;
    auto found = candidates_in(dir, stem, error);
    if (found.empty()) note(dir + "/" + stem + "*", error.empty() ? "not found" : error.c_str());
    all.insert(all.end(), found.begin(), found.end());
  }
  std::stable_sort(all.begin(), all.end(), [&](const std::string& a, const std::string& b) {
    return rank(major_of(a, stem), driver_major) < rank(major_of(b, stem), driver_major);
  });
  for (const auto& path : all)
    if (void* h = try_open(path)) return {h, path};
  // Last, whatever the loader finds (LD_LIBRARY_PATH, ldconfig cache).
  if (void* h = ::dlopen(stem, RTLD_NOW | RTLD_LOCAL)) {
    std::string path = stem;
    if (link_map* lm = nullptr; ::dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
      path = lm->l_name;
    return {h, path};
  }
  note(std::string(stem) + " via the dynamic loader", "not found");
  throw ToolkitNotFoundError(std::string(what) + " not found. Install it with `pip install " +
                             pip_package + "` (or `pip install \"nanocuda[nvrtc]\"` for "
                             "everything run-time compilation needs with a CUDA 13 driver, "
                             "`\"nanocuda[cu12]\"` with a CUDA 12 one), or install the CUDA "
                             "toolkit, or set $" + env_var + " to the library's path. Looked in:" +
                             looked);
}

namespace {

// The folder without symlinks or "..", for include paths a user can read; as given if that fails.
std::string resolved(const fs::path& d) {
  std::error_code ec;
  fs::path real = fs::canonical(d, ec);
  return ec ? d.string() : real.string();
}

// The folders searched for CUDA headers, nearest to the loaded NVRTC first.
std::vector<std::string> include_candidates(const std::string& library_path) {
  std::vector<std::string> dirs;
  if (fs::path lib_dir = fs::path(library_path).parent_path(); !lib_dir.empty()) {
    // Toolkit lib64/ and CUDA 13 wheels (nvidia/cu13/lib) alike: ../include.
    dirs.push_back((lib_dir / ".." / "include").string());
    // CUDA 12 wheels: nvidia/cuda_nvrtc/lib -> nvidia/cuda_runtime/include holds cuda.h.
    dirs.push_back((lib_dir / ".." / ".." / "cuda_runtime" / "include").string());
  }
  for (const auto& root : toolkit_roots()) dirs.push_back(root + "/include");
  for (const auto& d : include_search_dirs_extra()) dirs.push_back(d);
#ifdef NANOCUDA_TOOLKIT_INCLUDE_DIR
  append_list(dirs, NANOCUDA_TOOLKIT_INCLUDE_DIR);
#endif
  return dirs;
}

}  // namespace

namespace {

// The number after `#define <macro> ` in `file`; 0 when absent or unreadable.
long read_define(const fs::path& file, const std::string& macro) {
  std::ifstream in(file);
  const std::string wanted = "#define " + macro + " ";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(wanted, 0) == 0) return std::atol(line.c_str() + wanted.size());
  return 0;
}

// The CUDA major of the cuda.h in `dir`, 0 if unknown.
int cuda_h_major(const fs::path& dir) { return static_cast<int>(read_define(dir / "cuda.h", "CUDA_VERSION") / 1000); }

// The CUDA major whose toolkit ships the libcu++ in `dir` (CCCL 2.x came with CUDA 12, 3.x
// with 13), 0 if unknown.
int cccl_cuda_major(const fs::path& dir) {
  const long v = read_define(dir / "cuda/std/__cccl/version.h", "CCCL_VERSION");
  return v ? static_cast<int>(v / 1000000 + 10) : 0;
}

bool fits(int found, int wanted) { return found == 0 || wanted == 0 || found == wanted; }

}  // namespace

std::string toolkit_include_dir(const std::string& library_path, int cuda_major) {
  for (const fs::path d : include_candidates(library_path))
    if (present(d / "cuda.h") && fits(cuda_h_major(d), cuda_major)) return resolved(d);
  return {};
}

std::string cccl_include_dir(const std::string& library_path, int cuda_major) {
  // CUDA 13 keeps libcu++ in include/cccl (toolkit and nvidia-cuda-cccl alike); CUDA 12's
  // toolkit and cccl wheel put cuda/std directly in include.
  for (const fs::path d : include_candidates(library_path)) {
    for (const fs::path& c : {d / "cccl", d})
      if (present(c / "cuda/std/cstdint") && fits(cccl_cuda_major(c), cuda_major)) return resolved(c);
  }
  return {};
}

bool include_dir_fits(const std::string& dir, int cuda_major) {
  const fs::path d(dir);
  return fits(cuda_h_major(d), cuda_major) && fits(cccl_cuda_major(d), cuda_major) &&
         fits(cccl_cuda_major(d / "cccl"), cuda_major);
}

}  // namespace nanocuda::detail
