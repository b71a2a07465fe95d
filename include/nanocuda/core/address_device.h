// Which device a raw CUDA address belongs to, as the driver knows it.
#pragma once

#include <cstdint>
#include <optional>

namespace nanocuda {

// The ordinal of the device owning `address` (cuPointerGetAttribute), or nullopt when the
// driver does not know the address (a host pointer, freed memory). Other failures throw,
// naming `where`.
[[nodiscard]] std::optional<int> device_of_address(std::uint64_t address, const char* where);

}  // namespace nanocuda
