// What another process needs to map one buffer of an exported pool, as plain bytes.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace nanocuda {

// The driver's export data (cuMemPoolExportPointer), the size, and the pool's uuid. No
// file descriptor: the pool travels separately (IpcAllocationHandle), once per process.
struct IpcBufferDescriptor {
  CUmemPoolPtrExportData data{};
  std::uint64_t size = 0;
  std::array<unsigned char, 16> pool_uuid{};
  // Bytes of driver payload given (from_payload keeps short ones so the import, not the
  // constructor, says what is wrong, as cuda.core does).
  std::size_t payload_length = sizeof(CUmemPoolPtrExportData);

  // cuda.core's form: the driver's export bytes (at least 64; more are ignored) and the size.
  [[nodiscard]] static IpcBufferDescriptor from_payload(std::string_view payload, std::uint64_t size);
  [[nodiscard]] std::string payload() const;

  // A versioned byte string ("NCIPCB1" + fields); from_bytes checks its length and tag,
  // so garbage is a ValueError, never a driver call with random bytes.
  [[nodiscard]] std::string to_bytes() const;
  [[nodiscard]] static IpcBufferDescriptor from_bytes(std::string_view bytes);
};

}  // namespace nanocuda
