// The primary context of a device: shared with PyTorch, CuPy and the runtime API.
#pragma once

#include <cuda.h>

#include <memory>

namespace nanocuda {

namespace detail {
struct GreenContextState;  // owns a CUgreenCtx (core/green_context.h)
// Launches leave their stream's context current (launch/detail/launch_context.h). These per-thread
// notes tell Context::close a green context current only because a launch made it so (which
// it may swap out: cuda.core's launches leave nothing current) from one the user made current.
void note_launch_switch(CUcontext before, CUcontext made) noexcept;
void forget_launch_switch() noexcept;  // the user chose the current context
bool undo_launch_switch(CUcontext ctx, CUcontext fallback);  // for Context::close (context.cpp)
void forget_closed_context(CUcontext ctx) noexcept;         // a destroyed context is never restored
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
  // True once close() was called on a green context (any copy); a primary one never closes.
  [[nodiscard]] bool is_closed() const noexcept;
  // Closes a green context: no new streams; destroyed now, or when the last stream made on it
  // goes. Throws if the user made it current on this thread (a context a launch left current
  // is swapped back first); a no-op on a primary context (shared with PyTorch).
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
