// Geometry from a DLTensor: device, dtype, rank and stride rules, with their error text.
#include "nanocuda/tma/tensor_geometry.h"

#include <cstdint>
#include <optional>
#include <string>

#include "nanocuda/core/array_view.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tma_dtype.h"

namespace nanocuda {

namespace {

[[noreturn]] void value_error(const std::string& text) { throw ValueError(text); }

const char* where_it_lives(std::int32_t device_type) {
  switch (device_type) {
    case dlpack::kCPU: return "on the CPU";
    case dlpack::kCUDAHost: return "in pinned host memory";
    default: return "on a non-CUDA device";
  }
}

// The dtype's name from the core table; a DLPack code description for types it lacks.
std::string describe_dtype(dlpack::DataType d) {
  if (const DType* t = find_dtype(d)) return t->name;
  return "(DLPack code " + std::to_string(d.code) + ", " + std::to_string(d.bits) + " bits, " +
         std::to_string(d.lanes) + " lanes)";
}

// Row-major element strides (nullptr: compact) to bytes, checking the innermost dimension
// is contiguous; t.ndim was checked to be 1..5.
// Inlined into both callers: it is most of the per-tensor work.
[[gnu::always_inline]] inline TensorGeometry finish(const dlpack::Tensor& t,
                                                    CUtensorMapDataType dtype,
                                                    std::uint64_t itemsize, const char* where) {
  TensorGeometry g;
  g.ptr = reinterpret_cast<std::uint64_t>(t.data) + t.byte_offset;
  g.dtype = dtype;
  g.rank = static_cast<std::uint32_t>(t.ndim);
  const std::uint32_t r = g.rank;
  std::int64_t compact[kTensorMapMaxRank];
  const std::int64_t* strides = t.strides;
  if (!strides) {
    std::int64_t step = 1;
    for (std::uint32_t i = r; i-- > 0;) {
      compact[i] = step;
      step *= t.shape[i];
    }
    strides = compact;
  }
  for (std::uint32_t i = 0; i < r; ++i) g.shape[i] = static_cast<std::uint64_t>(t.shape[i]);
  if (g.shape[r - 1] != 1 && strides[r - 1] != 1)
    value_error(std::string(where) + ": the innermost dimension must be contiguous (stride 1), "
                "but the tensor's innermost stride is " + std::to_string(strides[r - 1]) +
                " elements; make it contiguous first");
  g.strides[r - 1] = itemsize;
  for (std::uint32_t i = r - 1; i-- > 0;) {
    if (g.shape[i] == 1) {
      g.strides[i] = (g.strides[i + 1] * g.shape[i + 1] + 15) / 16 * 16;
      continue;
    }
    if (strides[i] < 0)
      value_error(std::string(where) + ": negative strides are not supported by TMA (stride " +
                  std::to_string(strides[i]) + " in dimension " + std::to_string(i) + ")");
    g.strides[i] = static_cast<std::uint64_t>(strides[i]) * itemsize;
  }
  return g;
}

[[noreturn, gnu::noinline, gnu::cold]] void rank_error(std::int64_t rank, const char* where) {
  value_error(std::string(where) + ": rank must be 1..5, got " + std::to_string(rank) +
              " (the tensor's number of dimensions)");
}

}  // namespace

void check_tensor_rank(std::int64_t rank, const char* where) {
  if (rank < 1 || rank > kTensorMapMaxRank) rank_error(rank, where);
}

TensorGeometry tensor_geometry(const dlpack::Tensor& t, const char* where, const char* object,
                               DlpackDtypeName dtype_name) {
  if (t.device.device_type != dlpack::kCUDA && t.device.device_type != dlpack::kCUDAManaged)
    value_error(std::string(where) + ": the tensor must be on a CUDA device, but the " + object +
                " lives " + where_it_lives(t.device.device_type) + " (move it to the GPU first)");
  std::optional<CUtensorMapDataType> dtype = tma_data_type_if_supported(t.dtype);
  if (!dtype) [[unlikely]]  // throws: named by the caller's table, which may refuse first
    dtype = tma_data_type(t.dtype, dtype_name ? dtype_name(t.dtype) : describe_dtype(t.dtype), where);
  if (t.ndim < 1 || t.ndim > kTensorMapMaxRank) [[unlikely]] rank_error(t.ndim, where);
  return finish(t, *dtype, t.dtype.bits / 8u, where);  // every accepted type: whole bytes
}

TensorGeometry tensor_geometry(const ArrayView& v, const char* where, const char* object) {
  const dlpack::Tensor t{reinterpret_cast<void*>(static_cast<std::uintptr_t>(v.ptr)),
                         {v.device_type, v.device_id},
                         v.ndim(),
                         v.dtype.dl,
                         const_cast<std::int64_t*>(v.shape.data()),
                         const_cast<std::int64_t*>(v.strides.data()),
                         0};
  return tensor_geometry(t, where, object);
}

TensorGeometry tensor_geometry(const dlpack::Tensor& t, CUtensorMapDataType dtype,
                               const char* where) {
  if (t.ndim < 1 || t.ndim > kTensorMapMaxRank) [[unlikely]] rank_error(t.ndim, where);
  return finish(t, dtype, static_cast<std::uint64_t>(tensor_map_element_bits(dtype) / 8), where);
}

}  // namespace nanocuda
