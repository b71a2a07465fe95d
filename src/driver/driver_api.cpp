// Loads the CUDA driver on first use and fills the entry-point table through cuGetProcAddress.
#include "nanocuda/driver/driver_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>

#include "nanocuda/driver/driver_version.h"
#include "nanocuda/driver/error.h"

namespace nanocuda::detail {

std::atomic<const DriverApi*> g_driver_table{nullptr};

namespace {

DriverApi g_table;
std::mutex g_load_mutex;
std::string g_library_path;
// Set when loading failed; later calls rethrow the same failure (DriverNotFoundError or
// DriverTooOldError) without retrying dlopen.
std::exception_ptr g_failure;
// Entry points this driver lacks, ", "-separated; their table slots hold a stub.
std::string g_missing;

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

template <class E>
[[noreturn]] void fail_with(E error) {
  g_failure = std::make_exception_ptr(error);
  throw error;
}

[[noreturn]] void fail(CUresult code, std::string message) {
  fail_with(DriverNotFoundError(code, "load_driver", "", std::move(message)));
}

void load_locked() {
  const char* override_path = std::getenv("NANOCUDA_LIBCUDA");
  const std::string wanted = override_path && *override_path ? override_path : "libcuda.so.1";
  // RTLD_NOLOAD first: when PyTorch or CuPy already loaded the driver we share their copy.
  void* lib = dlopen(wanted.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!lib) lib = dlopen(wanted.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    fail(CUDA_ERROR_NO_DEVICE,
         "no NVIDIA driver found: could not load " + wanted + " (" + (why ? why : "unknown") +
             "). Install the NVIDIA driver, or set NANOCUDA_LIBCUDA to the path of libcuda.so.1");
  }
  g_library_path = wanted;
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  auto init = reinterpret_cast<decltype(&::cuInit)>(dlsym(lib, "cuInit"));
  if (!get_proc || !init)
    fail(CUDA_ERROR_NO_DEVICE, wanted + " has no cuGetProcAddress_v2: the NVIDIA driver is "
                                        "older than CUDA 12.0, which nanocuda needs");
  // The floor, before cuInit: an older driver gets a clear error, never a call through an
  // entry point whose ABI it does not have.
  // (The toolkit's stub library fails this call; its cuInit below says what it is.)
  int version = 0;
  auto get_version = reinterpret_cast<decltype(&::cuDriverGetVersion)>(dlsym(lib, "cuDriverGetVersion"));
  if (get_version && get_version(&version) == CUDA_SUCCESS) remember_driver_version(version);
  if (version != 0 && version < kOldestDriverVersion)
    fail_with(DriverTooOldError("nanocuda", version, kOldestDriverVersion,
                                "Update the NVIDIA driver (" + wanted + ")"));
  CUresult rc = init(0);
  if (rc == CUDA_ERROR_STUB_LIBRARY)
    fail(rc, "no NVIDIA driver found: " + wanted +
                 " is the CUDA toolkit's stub library, not a driver; remove the stubs folder "
                 "from LD_LIBRARY_PATH or install the NVIDIA driver");
  if (rc != CUDA_SUCCESS)
    fail(rc, "cuInit(0) failed in " + wanted + ": " + result_name(rc) + ": " +
                 result_description(rc));

  // Each entry point at the version whose ABI matches our cuda.h prototype.
  std::string missing;
#define NANOCUDA_LOAD_POINTER(name, version)                                               \
  {                                                                                        \
    void* fn = nullptr;                                                                    \
    CUdriverProcAddressQueryResult status{};                                               \
    if (get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS && \
        fn) {                                                                              \
      g_table.name = reinterpret_cast<decltype(&::name)>(fn);                             \
    } else {                                                                               \
      g_table.name = &MissingEntryPoint<decltype(&::name)>::call;                          \
      missing += std::string(missing.empty() ? "" : ", ") + #name;                        \
    }                                                                                      \
  }
  NANOCUDA_DRIVER_ENTRY_POINTS(NANOCUDA_LOAD_POINTER)
#undef NANOCUDA_LOAD_POINTER
  // A driver lacking a few newer entry points is still usable: their slots return
  // CUDA_ERROR_NOT_SUPPORTED, and the checked call's message names the missing function
  // (driver_lacks). The core set below is required.
  if (!entry_point_available(g_table.cuDeviceGet) ||
      !entry_point_available(g_table.cuCtxSetCurrent) ||
      !entry_point_available(g_table.cuLaunchKernel))
    fail(CUDA_ERROR_NOT_SUPPORTED, wanted + " lacks required entry points: " + missing);
  g_missing = missing;
  g_driver_table.store(&g_table, std::memory_order_release);
}

}  // namespace

const DriverApi& load_driver() {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (const DriverApi* table = g_driver_table.load(std::memory_order_acquire)) return *table;
  if (g_failure) std::rethrow_exception(g_failure);
  load_locked();
  return g_table;
}

const DriverApi* loaded_driver() noexcept {
  return g_driver_table.load(std::memory_order_acquire);
}

const char* driver_library_path() noexcept { return g_library_path.c_str(); }

bool driver_lacks(const char* name) noexcept {
  if (!loaded_driver() || g_missing.empty()) return false;
  // g_missing is written before the table is published and never after.
  const std::string_view list = g_missing, wanted = name;
  for (size_t at = 0; at < list.size();) {
    size_t end = list.find(", ", at);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(at, end - at) == wanted) return true;
    at = end + 2;
  }
  return false;
}

}  // namespace nanocuda::detail
