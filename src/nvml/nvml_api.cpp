// Loads NVML on first use, fills its entry-point table with dlsym, and names its error codes.
#include "nanocuda/nvml/nvml_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#include "nanocuda/nvml/nvml_error.h"

namespace nanocuda::nvml {

std::atomic<const NvmlApi*> g_nvml_table{nullptr};

namespace {

NvmlApi g_table;
std::mutex g_mutex;
std::exception_ptr g_failure;
std::atomic<int> g_state{0};

[[noreturn]] void fail(Return code, std::string message) {
  g_state.store(2);
  NvmlError error(code, "nvmlInit", "", std::move(message));
  g_failure = std::make_exception_ptr(error);
  throw error;
}

void load_locked() {
  const char* override_path = std::getenv("NANOCUDA_LIBNVML");
  const std::string wanted =
      override_path && *override_path ? override_path : "libnvidia-ml.so.1";
  void* lib = dlopen(wanted.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!lib) lib = dlopen(wanted.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    fail(kErrorLibraryNotFound,
         "nanocuda.system requires NVML support: could not load " + wanted + " (" +
             (why ? why : "unknown") +
             "). It comes with the NVIDIA driver; set NANOCUDA_LIBNVML to its path if it is "
             "installed elsewhere");
  }
  NvmlApi table;
#define NANOCUDA_NVML_LOAD(name, params) \
  table.name = reinterpret_cast<decltype(table.name)>(dlsym(lib, #name));
  NANOCUDA_NVML_ENTRY_POINTS(NANOCUDA_NVML_LOAD)
#undef NANOCUDA_NVML_LOAD
  table.nvmlErrorString = reinterpret_cast<decltype(table.nvmlErrorString)>(dlsym(lib, "nvmlErrorString"));
  if (!table.nvmlInit_v2)
    fail(kErrorFunctionNotFound, wanted + " has no nvmlInit_v2: it is not NVML, or too old");
  if (Return rc = table.nvmlInit_v2(); rc != kSuccess)
    fail(rc, std::string("nvmlInit_v2 failed in ") + wanted + ": " + return_name(rc) +
                 (table.nvmlErrorString ? std::string(": ") + table.nvmlErrorString(rc) : ""));
  g_table = table;
  g_state.store(1);
  g_nvml_table.store(&g_table, std::memory_order_release);
}

}  // namespace

const NvmlApi& load_nvml() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (const NvmlApi* table = g_nvml_table.load(std::memory_order_acquire)) return *table;
  if (g_failure) std::rethrow_exception(g_failure);
  load_locked();
  return g_table;
}

int state() noexcept { return g_state.load(); }

void reset_for_testing() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_nvml_table.store(nullptr, std::memory_order_release);
  g_failure = nullptr;
  g_state.store(0);
}

const char* return_name(Return code) noexcept {
  switch (code) {
    case 0: return "NVML_SUCCESS";
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10: return "NVML_ERROR_TIMEOUT";
    case 11: return "NVML_ERROR_IRQ_ISSUE";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 16: return "NVML_ERROR_RESET_REQUIRED";
    case 17: return "NVML_ERROR_OPERATING_SYSTEM";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19: return "NVML_ERROR_IN_USE";
    case 20: return "NVML_ERROR_MEMORY";
    case 21: return "NVML_ERROR_NO_DATA";
    case 22: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26: return "NVML_ERROR_DEPRECATED";
    case 27: return "NVML_ERROR_NOT_READY";
    case 28: return "NVML_ERROR_GPU_NOT_FOUND";
    case 29: return "NVML_ERROR_INVALID_STATE";
    case 30: return "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED";
    default: return "NVML_ERROR_UNKNOWN";
  }
}

}  // namespace nanocuda::nvml

namespace nanocuda {

namespace {

std::string compose(nvml::Return code, const std::string& call, const std::string& object,
                    const std::string& detail) {
  std::string text = call;
  if (!object.empty()) text += "(" + object + ")";
  if (!detail.empty()) return text + ": " + detail;
  text += std::string(" failed: ") + nvml::return_name(code);
  // nvmlErrorString only once the library is loaded: formatting never loads anything.
  if (const nvml::NvmlApi* t = nvml::g_nvml_table.load(std::memory_order_acquire);
      t && t->nvmlErrorString)
    if (const char* s = t->nvmlErrorString(code)) text += std::string(": ") + s;
  return text;
}

}  // namespace

NvmlError::NvmlError(nvml::Return code, std::string call, std::string object, std::string detail)
    : std::runtime_error(compose(code, call, object, detail)),
      code_(code),
      call_(std::move(call)),
      object_(std::move(object)) {}

const char* NvmlError::name() const noexcept { return nvml::return_name(code_); }

}  // namespace nanocuda
