// A failed NVML call: its nvmlReturn_t, the call and the device, and the checked-call helper.
#pragma once

#include <stdexcept>
#include <string>

#include "nanocuda/nvml/nvml_api.h"

namespace nanocuda {

// what() reads like "nvmlDeviceGetSerial(NVML device 0) failed: NVML_ERROR_NOT_SUPPORTED:
// Not Supported". Python maps code() to one nanocuda.system error class per code.
class NvmlError : public std::runtime_error {
 public:
  NvmlError(nvml::Return code, std::string call, std::string object, std::string detail = {});

  [[nodiscard]] nvml::Return code() const noexcept { return code_; }
  // "NVML_ERROR_NOT_SUPPORTED"; known without the library.
  [[nodiscard]] const char* name() const noexcept;
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& object() const noexcept { return object_; }

 private:
  nvml::Return code_;
  std::string call_;
  std::string object_;
};

namespace nvml {

// "NVML_ERROR_TIMEOUT" for code 10; "NVML_ERROR_<n>" for codes nanocuda does not know.
[[nodiscard]] const char* return_name(Return code) noexcept;

// Throws NvmlError unless `code` is success.
inline void check(Return code, const char* call, const std::string& object) {
  if (code != kSuccess) [[unlikely]] throw NvmlError(code, call, object);
}

// Calls entry point `name` through the table (loading it first) and checks the result; a
// library without that entry point gives FUNCTION_NOT_FOUND naming it.
#define NANOCUDA_NVML_CALL(object, name, ...)                                                   \
  [&] {                                                                                         \
    const auto& nvml_table = ::nanocuda::nvml::api();                                           \
    if (!nvml_table.name)                                                                       \
      throw ::nanocuda::NvmlError(::nanocuda::nvml::kErrorFunctionNotFound, #name, object,      \
                                  "the installed libnvidia-ml.so.1 has no " #name               \
                                  " (an older NVIDIA driver); update the driver");              \
    ::nanocuda::nvml::check(nvml_table.name(__VA_ARGS__), #name, object);                       \
  }()

}  // namespace nvml
}  // namespace nanocuda
