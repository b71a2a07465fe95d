// TensorGeometry: what a tensor says about itself for a tiled map, read from a DLPack DLTensor.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "nanocuda/core/array_view.h"
#include "nanocuda/core/dlpack.h"
#include "nanocuda/tma/tensor_map.h"

namespace nanocuda {

// Row-major, strides in bytes: the tensor half of TiledParams (the box and options are the
// caller's). A size-1 dimension gets a 16-byte-multiple stride whatever the producer said:
// it never affects addressing, and the driver's stride rules then hold.
struct TensorGeometry {
  std::uint64_t ptr = 0;  // element (0, ..., 0), byte_offset included
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  std::uint32_t rank = 0;
  TensorMapDims shape{};
  TensorMapDims strides{};
};

// Names a DLTensor's data type in errors, overriding the core table's name (nanocuda's
// own callers pass none). Called only on a refusal; it may throw an error of its own.
using DlpackDtypeName = std::string (*)(dlpack::DataType dtype);

// The geometry of `t`. Refuses, naming `where` and `object` (the tensor's kind, such as
// "torch.Tensor"): memory not on a CUDA device (ValueError); a dtype TMA cannot copy
// (TypeError, from tma_data_type, the dtype named by `dtype_name` or by its DLPack code);
// rank outside 1..5, a non-contiguous innermost dimension, negative strides (ValueError).
// Plain C++: needs no driver.
[[nodiscard]] TensorGeometry tensor_geometry(const dlpack::Tensor& t, const char* where,
                                             const char* object = "tensor",
                                             DlpackDtypeName dtype_name = nullptr);

// The same for the core's array model (an ArrayView produced from any protocol).
[[nodiscard]] TensorGeometry tensor_geometry(const ArrayView& v, const char* where,
                                             const char* object = "tensor");

// The same for a tensor its reader already knows to be on a CUDA device, with element type
// `dtype` (a reader with a dtype cache of its own): t.device and t.dtype are not read.
[[nodiscard]] TensorGeometry tensor_geometry(const dlpack::Tensor& t, CUtensorMapDataType dtype,
                                             const char* where);

// The rank rule of both: 1..5 (ValueError naming `where` otherwise). Also used by readers of
// an explicit shape (tiled_from_pointer).
void check_tensor_rank(std::int64_t rank, const char* where);

}  // namespace nanocuda
