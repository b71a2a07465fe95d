// Making Python TensorMaps: the tiled/im2col entry points (from tensors and raw pointers),
// the fastcall forms used per launch, and the objects they return.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>

#include "nanocuda/tma/tensor_map.h"
#include "tma/py_tensor_map.h"

namespace nanocuda::py {

// TensorMap.tiled / TensorMap.tiled_from_pointer (METH_FASTCALL | METH_KEYWORDS).
extern PyMethodDef g_tiled_def;
extern PyMethodDef g_tiled_from_pointer_def;

// TensorMap.tiled(tensor, box) with cuda.core's option defaults (StridedMemoryView's fast path).
nanobind::object tiled_cuda_core_defaults(PyObject* tensor, PyObject* box);

// TensorMap.im2col and im2col_from_pointer (bound with nanobind: not per-launch paths).
nanobind::object im2col(nanobind::handle tensor, nanobind::handle pixels_per_column,
                        nanobind::handle channels, nanobind::handle lower,
                        nanobind::handle upper, nanobind::handle element_strides,
                        nanobind::handle interleave, nanobind::handle swizzle,
                        nanobind::handle l2_promotion, nanobind::handle oob_fill,
                        bool validate_only);
nanobind::object im2col_from_pointer(std::uint64_t ptr, nanobind::handle dtype,
                                     nanobind::handle shape, nanobind::handle strides,
                                     nanobind::handle pixels_per_column, nanobind::handle channels,
                                     nanobind::handle lower, nanobind::handle upper,
                                     nanobind::handle element_strides,
                                     nanobind::handle interleave, nanobind::handle swizzle,
                                     nanobind::handle l2_promotion, nanobind::handle oob_fill,
                                     bool validate_only);

// A new Python TensorMap holding `map`, with the geometry it was built from (for repr,
// .geometry and replace_address); the other kind's members stay unset.
nanobind::object new_tensor_map(const TensorMap& map, PyTensorMap::Kind kind,
                                const TiledParams* tiled = nullptr,
                                const Im2colParams* im2col = nullptr);

// What will be (or was) passed to the driver, back in row-major order, as a dict.
nanobind::dict tensor_map_geometry(const TensorMapDriverArgs& args, bool tiled);

}  // namespace nanocuda::py
