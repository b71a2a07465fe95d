// The primary context of a device: shared with PyTorch, CuPy and the runtime API.
#pragma once

#include <cuda.h>

#include <memory>

namespace nanocuda {

namespace detail {
struct GreenContextState;  // owns a CUgreenCtx (core/green_context.h)
}  // namespace detail

// A retained primary context. One per device per process, created on first use and kept
// for the life of the process (releasing it at exit races the driver's own teardown, and
// PyTorch keeps it too). Every object made on a device holds its Context.
class Context {
 public:
  // The primary context of device `ordinal`, retained on first call.
  static std::shared_ptr<Context> primary(int ordinal);

  [[nodiscard]] CUcontext handle() const noexcept { return handle_; }
  [[nodiscard]] int device_ordinal() const noexcept { return ordinal_; }
  // Makes this context current on the calling thread and leaves it so (like cudaSetDevice).
  void set_current() const;

  Context(CUcontext handle, int ordinal) noexcept : handle_(handle), ordinal_(ordinal) {}
  // A green context (made by create_green_context in core/green_context.h): `handle` is its
  // CUcontext (cuCtxFromGreenCtx); copies share `green`, the last one destroys it.
  Context(CUcontext handle, int ordinal, std::shared_ptr<detail::GreenContextState> green) noexcept
      : handle_(handle), ordinal_(ordinal), green_(std::move(green)) {}

  [[nodiscard]] bool is_green() const noexcept { return green_ != nullptr; }
  // True once close() destroyed a green context; a primary context is never closed.
  [[nodiscard]] bool is_closed() const noexcept;
  // Destroys a green context now (its streams must be gone); throws if it is current on
  // this thread or if this is a primary context (shared with PyTorch: never closed).
  void close();
  [[nodiscard]] const std::shared_ptr<detail::GreenContextState>& green() const noexcept { return green_; }

 private:
  CUcontext handle_;
  int ordinal_;
  std::shared_ptr<detail::GreenContextState> green_;
};

// Makes a context current for a scope and restores the previous one, so nanocuda never
// changes which device PyTorch's next runtime call goes to. One cuCtxGetCurrent when the
// context is already current (the common single-GPU case).
class [[nodiscard]] CurrentContext {
 public:
  explicit CurrentContext(const Context& ctx);
  ~CurrentContext();
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace nanocuda
