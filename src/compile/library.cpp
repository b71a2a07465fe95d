// Library: cuLibraryLoadData/Unload, kernel enumeration and lookup by name.
#include "nanocuda/compile/library.h"

#include <mutex>
#include <unordered_map>

#include "nanocuda/driver/check.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace detail {
void unload_library(CUlibrary lib) noexcept {
  const auto* api = loaded_driver();
  if (!api) return;
  if (CUresult rc = api->cuLibraryUnload(lib); rc != CUDA_SUCCESS)
    record_deferred_error(rc, "cuLibraryUnload", "Library");
}
}  // namespace detail

namespace {
// The libraries loaded here, by handle, so an adopted kernel handle finds its owner.
std::mutex g_loaded_mutex;
std::unordered_map<CUlibrary, std::weak_ptr<const Library>> g_loaded;
}  // namespace

std::shared_ptr<Library> Library::load(const void* image, std::string description) {
  CUlibrary lib = nullptr;
  NANOCUDA_CALL(cuLibraryLoadData, [&] { return "Library from " + description; }, &lib, image,
                nullptr, nullptr, 0, nullptr, nullptr, 0);
  auto out = std::make_shared<Library>(lib, std::move(description));
  std::lock_guard<std::mutex> lock(g_loaded_mutex);
  for (auto it = g_loaded.begin(); it != g_loaded.end();)  // forget the unloaded ones
    it = it->second.expired() ? g_loaded.erase(it) : std::next(it);
  g_loaded[lib] = out;  // a handle the driver reuses after an unload names the new library
  return out;
}

std::shared_ptr<const Library> Library::find(CUlibrary handle) noexcept {
  std::lock_guard<std::mutex> lock(g_loaded_mutex);
  auto it = g_loaded.find(handle);
  return it == g_loaded.end() ? nullptr : it->second.lock();
}

std::vector<std::string> Library::kernel_names() const {
  const auto& api = detail::driver();
  if (!detail::entry_point_available(api.cuLibraryGetKernelCount) ||
      !detail::entry_point_available(api.cuLibraryEnumerateKernels) ||
      !detail::entry_point_available(api.cuKernelGetName))
    return {};  // drivers before 12.4 cannot enumerate; the error message just lists nothing
  auto what = [&] { return "Library from " + description_; };
  unsigned count = 0;
  detail::check(api.cuLibraryGetKernelCount(&count, handle()), "cuLibraryGetKernelCount", what);
  std::vector<CUkernel> kernels(count);
  if (count)
    detail::check(api.cuLibraryEnumerateKernels(kernels.data(), count, handle()),
                  "cuLibraryEnumerateKernels", what);
  std::vector<std::string> names;
  for (CUkernel k : kernels) {
    const char* name = nullptr;
    detail::check(api.cuKernelGetName(&name, k), "cuKernelGetName", what);
    names.emplace_back(name ? name : "?");
  }
  return names;
}

Kernel Library::get_kernel(const std::string& name) const {
  CUkernel kernel = nullptr;
  CUresult rc = detail::driver().cuLibraryGetKernel(&kernel, handle(), name.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) {
    std::string listing;
    for (const auto& n : kernel_names()) listing += (listing.empty() ? "" : ", ") + n;
    throw ValueError("no kernel named '" + name + "' in " + description_ +
                     "; it contains: " + (listing.empty() ? "(no kernels)" : listing) +
                     ". Templates need name_expressions at compile time; C++ functions "
                     "need extern \"C\" or their mangled name.");
  }
  detail::check(rc, "cuLibraryGetKernel", [&] { return "'" + name + "' in " + description_; });
  return Kernel(shared_from_this(), kernel, name);
}

}  // namespace nanocuda
