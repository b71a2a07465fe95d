// A loaded, context-independent CUlibrary: one load serves every context and device.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/compile/kernel.h"

namespace nanocuda {

namespace detail {
void unload_library(CUlibrary lib) noexcept;
}  // namespace detail

// Owned through shared_ptr: every Kernel taken from it holds it, so a Library lives as
// long as any of its kernels.
class Library : public std::enable_shared_from_this<Library> {
 public:
  // Loads a cubin, fatbin or NUL-terminated PTX image with cuLibraryLoadData.
  // `description` names the source in error messages.
  static std::shared_ptr<Library> load(const void* image, std::string description);
  // The live Library loaded by load() with this handle; nullptr for one loaded elsewhere.
  [[nodiscard]] static std::shared_ptr<const Library> find(CUlibrary handle) noexcept;

  [[nodiscard]] CUlibrary handle() const noexcept { return handle_.get(); }
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  // The names of every kernel in the library (cuLibraryEnumerateKernels).
  [[nodiscard]] std::vector<std::string> kernel_names() const;
  // The kernel with this exact (extern "C" or mangled) name; ValueError listing
  // kernel_names() if there is none.
  [[nodiscard]] Kernel get_kernel(const std::string& name) const;

  Library(CUlibrary handle, std::string description) noexcept
      : handle_(handle), description_(std::move(description)) {}

 private:
  detail::UniqueHandle<CUlibrary, detail::unload_library> handle_;
  std::string description_;
};

}  // namespace nanocuda
