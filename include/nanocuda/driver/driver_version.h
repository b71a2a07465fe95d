// The installed driver's CUDA version, the oldest one nanocuda supports, and the check each feature needing a newer one makes.
#pragma once

#include <string>

namespace nanocuda::detail {

// CUDA 12.4 (driver r550): the newest entry points the table needs for every launch and
// load (cuKernelGetParamInfo/cuFuncGetParamInfo for argument checks, cuLibraryGetKernelCount/
// cuLibraryEnumerateKernels for kernel lookup) arrived in 12.4. Older drivers get a
// DriverTooOldError at first use. Newer features check their own version (feature_versions).
inline constexpr int kOldestDriverVersion = 12040;

// "12.8" for 12080.
[[nodiscard]] std::string cuda_version_text(int version);
// The first NVIDIA driver branch for a CUDA version ("r570" for 12.8); "" when unknown.
[[nodiscard]] std::string driver_branch_for(int version);

// The installed driver's CUDA version (cuDriverGetVersion) without initialising it or
// filling the table, so `nanocuda info` works on any driver: 0 when there is no driver.
[[nodiscard]] int installed_driver_version() noexcept;
// Called by load_driver() once it has asked the driver.
void remember_driver_version(int version) noexcept;

// Throws DriverTooOldError naming `feature` unless the driver (loaded now if need be) is
// CUDA `required` or newer.
void require_driver_version(int required, const char* feature);

// The oldest driver that loads code of `type_name` ("cubin", "ptx", ...) that NVRTC `compiler`
// produced; one rule for Library loads and `nanocuda info`. Cubins load on any driver of the
// same major (minor version compatibility) but not an older major (ELF ABI); PTX also needs
// the driver's JIT to know its PTX ISA, so it needs the NVRTC's full version.
[[nodiscard]] int driver_needed_for(int compiler, const std::string& type_name);
// What to do when the NVRTC in use is newer than driver `driver`: which package to install.
[[nodiscard]] std::string newer_nvrtc_advice(int driver, int needed);

// `nanocuda info`'s verdict on NVRTC `nvrtc` with driver `driver`: empty when its cubins and
// PTX both load, else which does not and what to do.
[[nodiscard]] std::string nvrtc_driver_mismatch(int nvrtc, int driver);

}  // namespace nanocuda::detail
