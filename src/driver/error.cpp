// Error text: names and descriptions of CUresult codes, known without a driver.
#include "nanocuda/driver/error.h"

#include <string>

#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

struct ResultInfo {
  int code;
  const char* name;
  const char* description;
};

constexpr ResultInfo kResults[] = {
#define X(name, value, description) {value, #name, description},
#include "result_names.inc"
#undef X
};

const ResultInfo* find_result(CUresult code) noexcept {
  for (const auto& info : kResults)
    if (info.code == static_cast<int>(code)) return &info;
  return nullptr;
}

std::string compose(CUresult code, const std::string& call, const std::string& object,
                    const std::string& detail) {
  std::string text = call;
  if (!object.empty()) text += "(" + object + ")";
  if (!detail.empty()) return text + ": " + detail;
  return text + " failed: " + result_name(code) + ": " + result_description(code);
}

}  // namespace

std::string result_name(CUresult code) {
  if (const ResultInfo* info = find_result(code)) return info->name;
  return "CUDA_ERROR_UNKNOWN_CODE_" + std::to_string(static_cast<int>(code));
}

std::string result_description(CUresult code) {
  // Prefer the installed driver's wording; fall back to the text from our cuda.h.
  if (const auto* api = detail::loaded_driver(); api && api->cuGetErrorString) {
    const char* text = nullptr;
    if (api->cuGetErrorString(code, &text) == CUDA_SUCCESS && text) return text;
  }
  if (const ResultInfo* info = find_result(code)) return info->description;
  return "unrecognized CUDA error code";
}

Error::Error(CUresult code, std::string call, std::string object, std::string detail)
    : std::runtime_error(compose(code, call, object, detail)),
      code_(code),
      call_(std::move(call)),
      object_(std::move(object)),
      detail_(std::move(detail)) {}

const char* Error::name() const noexcept {
  const ResultInfo* info = find_result(code_);
  return info ? info->name : "CUDA_ERROR_UNKNOWN";
}

const char* Error::description() const noexcept {
  const ResultInfo* info = find_result(code_);
  return info ? info->description : "unrecognized CUDA error code";
}

namespace {
std::string with_call(const std::string& call, std::string_view text) {
  std::string out = call;
  out += ": ";
  out += text;
  return out;
}
}  // namespace

ValueError::ValueError(std::string call, std::string_view text)
    : std::invalid_argument(with_call(call, text)), call_(std::move(call)) {}

TypeError::TypeError(std::string call, std::string_view text)
    : std::invalid_argument(with_call(call, text)), call_(std::move(call)) {}

namespace detail {

void throw_error(CUresult code, const char* call, const std::string& object) {
  if (code == CUDA_ERROR_NOT_SUPPORTED && driver_lacks(call)) {
    int version = 0;
    if (const auto* api = loaded_driver()) api->cuDriverGetVersion(&version);
    throw Error(code, call, object,
                "CUDA_ERROR_NOT_SUPPORTED: the installed NVIDIA driver (CUDA " +
                    std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) +
                    ") does not provide " + call + "; update the driver to use this feature");
  }
  throw Error(code, call, object);
}

}  // namespace detail
}  // namespace nanocuda
