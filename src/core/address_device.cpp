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

AddressInfo describe_address(std::uint64_t address, const char* where) {
  const auto& api = detail::driver();
  auto ptr = static_cast<CUdeviceptr>(address);
  unsigned int type = 0;
  CUresult rc = api.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
  if (rc == CUDA_ERROR_INVALID_VALUE) return {AddressInfo::Kind::pageable_host, -1};
  detail::check(rc, "cuPointerGetAttribute", where);
  AddressInfo info;
  unsigned int managed = 0;
  detail::check(api.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr), "cuPointerGetAttribute", where);
  if (managed) info.kind = AddressInfo::Kind::managed;
  else if (type == CU_MEMORYTYPE_HOST) info.kind = AddressInfo::Kind::pinned_host;
  else if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) info.kind = AddressInfo::Kind::device;
  else return info;  // no memory type (a driver that does not say): leave it unknown
  info.device = device_of_address(address, where).value_or(-1);
  return info;
}

}  // namespace nanocuda
