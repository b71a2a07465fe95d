// The DLPack 1.x ABI (structs and constants from the public DLPack specification), written
// out here so nanocuda depends on no framework's headers; plain C++ (geometry from a DLTensor).
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

// The DLPack C exchange API (DLPack 1.2+): a producer type exposes, as the type attribute
// __dlpack_c_exchange_api__ (a capsule named "dlpack_exchange_api"), a table of C functions.
// nanocuda reads tensors with dltensor_from_py_object_no_sync (a non-owning view filled into a
// caller-provided DLTensor, with no Python call and no allocation) and provides the whole
// table for StridedMemoryView. All functions are called with the GIL held.
struct ExchangeApiHeader {
  PackVersion version;
  ExchangeApiHeader* prev_api;  // an older table, for consumers of an older minor version
};

using SetError = void (*)(void* error_ctx, const char* kind, const char* message);

struct ExchangeApi {
  ExchangeApiHeader header;
  int (*managed_tensor_allocator)(Tensor* prototype, ManagedTensorVersioned** out, void* error_ctx,
                                  SetError set_error);
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, ManagedTensorVersioned** out);
  int (*managed_tensor_to_py_object_no_sync)(ManagedTensorVersioned* tensor, void** out_py_object);
  int (*dltensor_from_py_object_no_sync)(void* py_object, Tensor* out);
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
};

}  // namespace nanocuda::dlpack
