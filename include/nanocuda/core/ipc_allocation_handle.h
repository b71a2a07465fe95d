// A pool exported to other processes: an owned POSIX file descriptor plus the pool's uuid.
#pragma once

#include <array>

namespace nanocuda {

// Owns its file descriptor (closed by close() or the destructor). Send it to another
// process with SCM_RIGHTS (Python: multiprocessing's DupFd), never as a number.
class IpcAllocationHandle {
 public:
  IpcAllocationHandle(int fd, const std::array<unsigned char, 16>& uuid) noexcept : fd_(fd), uuid_(uuid) {}
  IpcAllocationHandle(IpcAllocationHandle&& other) noexcept;
  IpcAllocationHandle& operator=(IpcAllocationHandle&& other) noexcept;
  IpcAllocationHandle(const IpcAllocationHandle&) = delete;
  IpcAllocationHandle& operator=(const IpcAllocationHandle&) = delete;
  ~IpcAllocationHandle();

  [[nodiscard]] int fd() const;  // throws ValueError once closed
  [[nodiscard]] bool is_closed() const noexcept { return fd_ < 0; }
  [[nodiscard]] const std::array<unsigned char, 16>& uuid() const noexcept { return uuid_; }
  // Gives up the descriptor without closing it.
  [[nodiscard]] int release() noexcept;
  void close() noexcept;

 private:
  int fd_ = -1;
  std::array<unsigned char, 16> uuid_{};
};

}  // namespace nanocuda
