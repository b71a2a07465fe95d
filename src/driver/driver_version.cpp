// The driver's CUDA version without a cuInit, the floor, and the per-feature version check.
#include "nanocuda/driver/driver_version.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

#include "nanocuda/driver/driver_api.h"
#include "nanocuda/driver/error.h"

namespace nanocuda::detail {

namespace {
std::atomic<int> g_version{0};
}  // namespace

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string driver_branch_for(int version) {
  // From NVIDIA's CUDA toolkit release notes (minimum Linux driver per toolkit).
  struct Row {
    int cuda;
    const char* branch;
  };
  static constexpr Row kRows[] = {{13000, "r580"}, {12090, "r575"}, {12080, "r570"},
                                  {12060, "r560"}, {12050, "r555"}, {12040, "r550"}};
  for (const Row& r : kRows)
    if (version >= r.cuda) return version / 1000 == r.cuda / 1000 ? r.branch : "";
  return "";
}

void remember_driver_version(int version) noexcept { g_version.store(version, std::memory_order_relaxed); }

int installed_driver_version() noexcept {
  if (int v = g_version.load(std::memory_order_relaxed)) return v;
  int v = 0;
  if (const DriverApi* api = loaded_driver()) {
    api->cuDriverGetVersion(&v);
  } else {
    // The same library load_driver() opens; cuDriverGetVersion needs no cuInit. The handle is
    // kept: load_driver() opens the same one later.
    const char* override_path = std::getenv("NANOCUDA_LIBCUDA");
    const char* wanted = override_path && *override_path ? override_path : "libcuda.so.1";
    void* lib = ::dlopen(wanted, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!lib) lib = ::dlopen(wanted, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    auto get = reinterpret_cast<CUresult (*)(int*)>(::dlsym(lib, "cuDriverGetVersion"));
    if (!get || get(&v) != CUDA_SUCCESS) return 0;
  }
  remember_driver_version(v);
  return v;
}

void require_driver_version(int required, const char* feature) {
  (void)driver();  // a missing or too-old driver says so first
  const int found = installed_driver_version();
  if (found < required) [[unlikely]]
    throw DriverTooOldError(feature, found, required);
}

int driver_needed_for(int compiler, const std::string& type_name) {
  return type_name == "ptx" ? compiler : compiler / 1000 * 1000;
}

std::string newer_nvrtc_advice(int driver, int needed) {
  std::string text = driver / 1000 == 12
                         ? "Install CUDA 12's NVRTC, which nanocuda then prefers on this driver: "
                           "pip install \"nanocuda[cu12]\""
                         : "Use an NVRTC no newer than the driver (set $NANOCUDA_NVRTC to its path)";
  const std::string branch = driver_branch_for(needed);
  return text + ", or update the NVIDIA driver" + (branch.empty() ? "" : " to " + branch + " or newer");
}

std::string nvrtc_driver_mismatch(int nvrtc, int driver) {
  if (nvrtc == 0 || driver == 0) return {};
  for (const char* type : {"cubin", "ptx"})
    if (const int needed = driver_needed_for(nvrtc, type); driver < needed)
      return std::string(type == std::string("ptx") ? "PTX (cubins load)" : "code") + " from NVRTC " +
             cuda_version_text(nvrtc) + " needs a driver for CUDA " + cuda_version_text(needed) +
             " or newer. " + newer_nvrtc_advice(driver, needed);
  return {};
}

}  // namespace nanocuda::detail

namespace nanocuda {

namespace {
std::string too_old_text(const std::string& feature, int found, int required, const std::string& advice) {
  using detail::cuda_version_text;
  std::string branch = detail::driver_branch_for(required);
  return "needs an NVIDIA driver for CUDA " + cuda_version_text(required) + " or newer" +
         (branch.empty() ? "" : " (" + branch + ")") + "; the installed driver is CUDA " +
         cuda_version_text(found) + ". " +
         (advice.empty() ? std::string("Update the NVIDIA driver to use ") + feature : advice);
}
}  // namespace

DriverTooOldError::DriverTooOldError(std::string feature, int found, int required, std::string advice)
    : Error(CUDA_ERROR_NOT_SUPPORTED, feature, "", too_old_text(feature, found, required, advice)),
      found_(found),
      required_(required) {}

}  // namespace nanocuda
