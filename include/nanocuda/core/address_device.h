// Which device a raw CUDA address belongs to, as the driver knows it.
#pragma once

#include <cstdint>
#include <optional>

namespace nanocuda {

// The ordinal of the device owning `address` (cuPointerGetAttribute), or nullopt when the
// driver does not know the address (a host pointer, freed memory). Other failures throw,
// naming `where`.
[[nodiscard]] std::optional<int> device_of_address(std::uint64_t address, const char* where);

// Where the memory at an address lives, for memory nanocuda did not allocate (cuda.core's
// Buffer.from_handle answers is_host_accessible / is_device_accessible / device_id from it).
struct AddressInfo {
  // unknown: the driver answered without a memory type (no classification to act on).
  enum class Kind { unknown, pageable_host, pinned_host, device, managed };
  Kind kind = Kind::unknown;
  int device = -1;  // the owning device's ordinal; -1 for pageable host memory
  [[nodiscard]] bool host_accessible() const noexcept { return kind != Kind::device; }
  [[nodiscard]] bool device_accessible() const noexcept { return kind != Kind::pageable_host; }
};
// Pageable host memory (unknown to the driver) is pageable_host; other failures throw,
// naming `where`.
[[nodiscard]] AddressInfo describe_address(std::uint64_t address, const char* where);

}  // namespace nanocuda
