// Geometry from a DLTensor (CPU): strides to bytes, size-1 dims, byte_offset, and every refusal.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tensor_geometry.h"

namespace nanocuda {
namespace {

constexpr auto kAddr = 0x7F0000000000ull;

dlpack::Tensor cuda_tensor(std::int64_t* shape, std::int64_t* strides, std::int32_t ndim,
                           dlpack::DataType dtype = {dlpack::kFloat, 16, 1}) {
  return dlpack::Tensor{reinterpret_cast<void*>(kAddr), {dlpack::kCUDA, 0}, ndim, dtype,
                        shape, strides, 0};
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TensorGeometry, CompactAndStridedInBytes) {
  std::int64_t shape[] = {3, 128, 256};
  TensorGeometry g = tensor_geometry(cuda_tensor(shape, nullptr, 3, {dlpack::kFloat, 32, 1}), "f");
  EXPECT_EQ(g.ptr, kAddr);
  EXPECT_EQ(g.dtype, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(g.rank, 3u);
  EXPECT_EQ(g.shape[0], 3u);
  EXPECT_EQ(g.shape[2], 256u);
  EXPECT_EQ(g.strides[0], 131072u);
  EXPECT_EQ(g.strides[1], 1024u);
  EXPECT_EQ(g.strides[2], 4u);
  std::int64_t padded_shape[] = {64, 100}, padded[] = {128, 1};  // a padded-row view
  dlpack::Tensor t = cuda_tensor(padded_shape, padded, 2);
  t.byte_offset = 256;
  g = tensor_geometry(t, "f");
  EXPECT_EQ(g.ptr, kAddr + 256);
  EXPECT_EQ(g.strides[0], 256u);
  EXPECT_EQ(g.strides[1], 2u);
}

TEST(TensorGeometry, SizeOneDimsGetHarmlessStrides) {
  std::int64_t shape[] = {1, 5, 8}, strides[] = {-7, 8, 1};  // a size-1 dim's stride is moot
  TensorGeometry g = tensor_geometry(cuda_tensor(shape, strides, 3), "f");
  EXPECT_EQ(g.strides[0] % 16, 0u);
  EXPECT_GE(g.strides[0], 5u * 8u * 2u);
}

TEST(TensorGeometry, RefusalsNameTheCallAndTheRule) {
  std::int64_t shape[] = {64, 64}, transposed[] = {1, 64}, negative[] = {-64, 1};
  EXPECT_NE(error_of([&] { (void)tensor_geometry(cuda_tensor(shape, transposed, 2), "T.tiled"); })
                .find("T.tiled: the innermost dimension must be contiguous"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)tensor_geometry(cuda_tensor(shape, negative, 2), "f"); })
                .find("negative strides are not supported"), std::string::npos);
  std::int64_t six[] = {2, 2, 2, 2, 2, 2};
  EXPECT_THROW((void)tensor_geometry(cuda_tensor(six, nullptr, 6), "f"), ValueError);
  EXPECT_NE(error_of([&] { (void)tensor_geometry(cuda_tensor(six, nullptr, 6), "f"); })
                .find("f: rank must be 1..5, got 6"), std::string::npos);
  dlpack::Tensor host = cuda_tensor(shape, nullptr, 2);
  host.device.device_type = dlpack::kCPU;
  EXPECT_EQ(error_of([&] { (void)tensor_geometry(host, "f", "numpy.ndarray"); }),
            "f: the tensor must be on a CUDA device, but the numpy.ndarray lives on the CPU "
            "(move it to the GPU first)");
  host.device.device_type = dlpack::kCUDAHost;
  EXPECT_NE(error_of([&] { (void)tensor_geometry(host, "f"); }).find("the tensor lives in pinned"),
            std::string::npos);
  dlpack::Tensor managed = cuda_tensor(shape, nullptr, 2);
  managed.device.device_type = dlpack::kCUDAManaged;
  EXPECT_EQ(tensor_geometry(managed, "f").rank, 2u);
}

TEST(TensorGeometry, DtypesTheCallerNamesOnlyOnRefusal) {
  std::int64_t shape[] = {64, 64};
  static int named = 0;
  const DlpackDtypeName name = [](dlpack::DataType) -> std::string {
    ++named;
    return "complex64";
  };
  (void)tensor_geometry(cuda_tensor(shape, nullptr, 2), "f", "tensor", name);
  EXPECT_EQ(named, 0);
  std::string e = error_of([&] {
    (void)tensor_geometry(cuda_tensor(shape, nullptr, 2, {dlpack::kComplex, 64, 1}), "f", "t", name);
  });
  EXPECT_EQ(named, 1);
  EXPECT_NE(e.find("f: unsupported dtype complex64 for TMA"), std::string::npos) << e;
  e = error_of([&] {
    (void)tensor_geometry(cuda_tensor(shape, nullptr, 2, {dlpack::kFloat, 16, 2}), "f");
  });
  EXPECT_NE(e.find("unsupported dtype (DLPack code 2, 16 bits, 2 lanes)"), std::string::npos) << e;
  e = error_of([&] {
    (void)tensor_geometry(cuda_tensor(shape, nullptr, 2, {dlpack::kBool, 8, 1}), "f");
  });
  EXPECT_NE(e.find("dtype bool is not supported"), std::string::npos) << e;
  // float8 travels as bytes, with byte strides.
  TensorGeometry g =
      tensor_geometry(cuda_tensor(shape, nullptr, 2, {dlpack::kFloat8_e4m3fn, 8, 1}), "f");
  EXPECT_EQ(g.dtype, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(g.strides[0], 64u);
}

TEST(TensorGeometry, KnownDtypeSkipsDeviceAndDtype) {
  std::int64_t shape[] = {16, 32};
  dlpack::Tensor t = cuda_tensor(shape, nullptr, 2, {dlpack::kBool, 8, 1});
  t.device.device_type = dlpack::kCPU;  // not read: the caller checked it
  TensorGeometry g = tensor_geometry(t, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "f");
  EXPECT_EQ(g.dtype, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(g.strides[0], 128u);
  EXPECT_THROW((void)tensor_geometry(cuda_tensor(shape, nullptr, 0), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "f"),
               ValueError);
}

}  // namespace
}  // namespace nanocuda
