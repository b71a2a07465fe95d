// One generic move-only owner for driver handles, so no type hand-writes its moves.
#pragma once

#include <utility>

namespace nanocuda::detail {

// Owns `Handle` and calls `Destroy(handle)` (which must not throw) when it goes.
template <class Handle, void (*Destroy)(Handle) noexcept>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle h) noexcept : handle_(h) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, Handle{}));
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  [[nodiscard]] Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != Handle{}; }
  // Gives the handle up without destroying it.
  [[nodiscard]] Handle release() noexcept { return std::exchange(handle_, Handle{}); }
  void reset(Handle h = Handle{}) noexcept {
    if (handle_ != Handle{}) Destroy(handle_);
    handle_ = h;
  }

 private:
  Handle handle_{};
};

}  // namespace nanocuda::detail
