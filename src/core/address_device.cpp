// The device of a raw address, for interop protocols that do not carry it.
#include "nanocuda/core/address_device.h"

#include "nanocuda/driver/check.h"

namespace nanocuda {

std::optional<int> device_of_address(std::uint64_t address, const char* where) {
  int ordinal = -1;
  CUresult rc = detail::driver().cuPointerGetAttribute(
      &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, static_cast<CUdeviceptr>(address));
  if (rc == CUDA_ERROR_INVALID_VALUE) return std::nullopt;
  detail::check(rc, "cuPointerGetAttribute", where);
  return ordinal;
}

}  // namespace nanocuda
