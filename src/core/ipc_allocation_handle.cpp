// The owned file descriptor of an exported pool.
#include "nanocuda/core/ipc_allocation_handle.h"

#include <unistd.h>

#include <utility>

#include "nanocuda/driver/error.h"

namespace nanocuda {

IpcAllocationHandle::IpcAllocationHandle(IpcAllocationHandle&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), uuid_(other.uuid_) {}

IpcAllocationHandle& IpcAllocationHandle::operator=(IpcAllocationHandle&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    uuid_ = other.uuid_;
  }
  return *this;
}

IpcAllocationHandle::~IpcAllocationHandle() { close(); }

int IpcAllocationHandle::fd() const {
  if (fd_ < 0) throw ValueError("IPCAllocationHandle: the handle is closed");
  return fd_;
}

int IpcAllocationHandle::release() noexcept { return std::exchange(fd_, -1); }

void IpcAllocationHandle::close() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

}  // namespace nanocuda
