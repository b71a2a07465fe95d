// The core's array model: one dtype table, torch's contiguity rule, extents; no driver needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "nanocuda/core/array_view.h"
#include "nanocuda/tma/tensor_geometry.h"

using namespace nanocuda;

TEST(ArrayView, OneDtypeTableByNameCodeAndTypestr) {
  const DType* f = find_dtype("float32");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f, find_dtype("f4"));
  EXPECT_EQ(f, find_dtype(dlpack::DataType{dlpack::kFloat, 32, 1}));
  EXPECT_EQ(f, find_dtype_typestr("<f4"));
  EXPECT_EQ(f->itemsize(), 4);
  EXPECT_EQ(find_dtype(dlpack::DataType{dlpack::kFloat, 32, 2}), nullptr);  // vectors: no
  EXPECT_EQ(find_dtype_typestr("|V2"), nullptr);  // bfloat16 or a struct: ambiguous
  EXPECT_EQ(find_dtype_typestr(">f4"), nullptr);  // big-endian data
  EXPECT_EQ(find_dtype_typestr(">u1"), find_dtype("uint8"));  // one byte has no order
  EXPECT_STREQ(find_dtype(dlpack::DataType{dlpack::kBfloat, 16, 1})->name, "bfloat16");
  EXPECT_EQ(find_dtype("float128"), nullptr);
  EXPECT_GE(dtype_table().size(), 17u);
}

TEST(ArrayView, ContiguousAsTorchDefinesIt) {
  const std::int64_t empty[] = {2, 0}, empty_strides[] = {1, 1};
  EXPECT_TRUE(is_contiguous(2, empty, empty_strides));  // empty: whatever the strides
  const std::int64_t ones[] = {3, 1}, ones_strides[] = {1, 99};
  EXPECT_TRUE(is_contiguous(2, ones, ones_strides));  // size 1: no stride imposed
  const std::int64_t m[] = {2, 3}, c[] = {3, 1}, f[] = {1, 2};
  EXPECT_TRUE(is_contiguous(2, m, c));
  EXPECT_FALSE(is_contiguous(2, m, f));
  EXPECT_TRUE(is_contiguous(2, m, nullptr));  // no strides: compact
  EXPECT_TRUE(is_contiguous(0, nullptr, nullptr));
}

TEST(ArrayView, ExtentAndCompactStrides) {
  ArrayView v;
  v.dtype = *find_dtype("int16");
  v.shape = {4, 3};
  v.strides = {6, 2};
  EXPECT_EQ(v.numel(), 12);
  EXPECT_EQ(v.nbytes(), 24u);
  EXPECT_EQ(v.extent_bytes(), (3 * 6 + 2 * 2 + 1) * 2u);
  EXPECT_FALSE(v.is_contiguous());
  v.strides = {-3, 1};  // a reversed outer dimension reaches below ptr
  EXPECT_EQ(v.extent_bytes(), 12 * 2u);
  v.shape = {4, 0};
  EXPECT_EQ(v.extent_bytes(), 0u);
  EXPECT_TRUE(v.is_contiguous());
  const std::int64_t shape[] = {2, 0, 3};
  EXPECT_EQ(compact_strides(shape), (std::vector<std::int64_t>{3, 3, 1}));
}

TEST(ArrayView, TensorMapGeometryReadsTheModel) {
  ArrayView v;
  v.ptr = 0x10000;
  v.dtype = *find_dtype("float16");
  v.shape = {64, 32};
  v.strides = {64, 1};
  TensorGeometry g = tensor_geometry(v, "f");
  EXPECT_EQ(g.rank, 2u);
  EXPECT_EQ(g.strides[0], 128u);
  v.dtype = *find_dtype("complex64");
  try {
    (void)tensor_geometry(v, "f");
    FAIL() << "complex64 has no TMA type";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string_view(e.what()).find("unsupported dtype complex64"), std::string_view::npos)
        << e.what();
  }
}
