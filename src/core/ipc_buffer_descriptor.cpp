// The byte form of an IPC buffer descriptor, checked on the way in.
#include "nanocuda/core/ipc_buffer_descriptor.h"

#include <algorithm>
#include <cstring>

#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {
constexpr char kTag[8] = {'N', 'C', 'I', 'P', 'C', 'B', '1', '\0'};
constexpr std::size_t kLength = sizeof kTag + sizeof(CUmemPoolPtrExportData) + 8 + 16;
}  // namespace

std::string IpcBufferDescriptor::to_bytes() const {
  std::string out(kLength, '\0');
  char* p = out.data();
  std::memcpy(p, kTag, sizeof kTag), p += sizeof kTag;
  std::memcpy(p, &data, sizeof data), p += sizeof data;
  std::memcpy(p, &size, 8), p += 8;
  std::memcpy(p, pool_uuid.data(), 16);
  return out;
}

IpcBufferDescriptor IpcBufferDescriptor::from_bytes(std::string_view bytes) {
  if (bytes.size() != kLength || std::memcmp(bytes.data(), kTag, sizeof kTag) != 0)
    throw ValueError("IpcBufferDescriptor::from_bytes", "not a nanocuda IPC buffer descriptor (" +
                     std::to_string(bytes.size()) + " bytes; expected " + std::to_string(kLength) +
                     " starting with 'NCIPCB1')");
  IpcBufferDescriptor d;
  const char* p = bytes.data() + sizeof kTag;
  std::memcpy(&d.data, p, sizeof d.data), p += sizeof d.data;
  std::memcpy(&d.size, p, 8), p += 8;
  std::memcpy(d.pool_uuid.data(), p, 16);
  if (d.size == 0) throw ValueError("IpcBufferDescriptor::from_bytes", "the descriptor's size is 0");
  return d;
}

IpcBufferDescriptor IpcBufferDescriptor::from_payload(std::string_view payload, std::uint64_t size) {
  IpcBufferDescriptor d;
  d.payload_length = payload.size();
  std::memcpy(&d.data, payload.data(), std::min(payload.size(), sizeof d.data));
  if (payload.size() >= sizeof d.data + 16) std::memcpy(d.pool_uuid.data(), payload.data() + sizeof d.data, 16);
  d.size = size;
  return d;
}

std::string IpcBufferDescriptor::payload() const {
  // The export bytes, then the pool's uuid (so a descriptor rebuilt from its payload still
  // names its pool); from_payload reads both.
  std::string out(sizeof data + 16, '\0');
  std::memcpy(out.data(), &data, sizeof data);
  std::memcpy(out.data() + sizeof data, pool_uuid.data(), 16);
  return out;
}

}  // namespace nanocuda
