// The DLPack 1.x ABI (structs and constants from the public DLPack specification), written
// out here so the extension depends on no framework's headers.
#pragma once

#include <cstdint>

namespace nanocuda::dlpack {

enum DeviceType : int32_t {
  kCPU = 1,
  kCUDA = 2,
  kCUDAHost = 3,
  kCUDAManaged = 13,
};

enum TypeCode : uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kOpaqueHandle = 3,
  kBfloat = 4,
  kComplex = 5,
  kBool = 6,
  kFloat8_e4m3fn = 10,
  kFloat8_e5m2 = 12,
};

struct Device {
  int32_t device_type;
  int32_t device_id;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; nullptr means compact row-major
  uint64_t byte_offset;
};

// Pre-1.0 capsules ("dltensor").
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct PackVersion {
  uint32_t major;
  uint32_t minor;
};

// 1.0 capsules ("dltensor_versioned").
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  uint64_t flags;
  Tensor dl_tensor;
};

inline constexpr uint64_t kFlagReadOnly = 1ull << 0;

}  // namespace nanocuda::dlpack
