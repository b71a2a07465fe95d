// Turning Python arguments into TensorMap parameters: option names, int sequences, and the
// geometry of a tensor (with a torch fast path).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>

#include "nanocuda/tma/tensor_geometry.h"
#include "nanocuda/tma/tensor_map.h"

namespace nanocuda::py {

// The geometry of a torch / CuPy tensor, Buffer, DLPack or CUDA-array-interface object: the
// object is read here, the rules are the core's (nanocuda::tensor_geometry). Needs no
// driver. Raises ValueError for host memory, rank > 5, or a non-contiguous innermost
// dimension; TypeError for dtypes TMA cannot copy.
TensorGeometry tensor_geometry(nanobind::handle tensor, const char* where);

// A dtype argument: a name ("float16", "tfloat32", "16u4_align8b"), numpy/torch dtype, or a
// CUtensorMapDataType int.
CUtensorMapDataType parse_tma_dtype(nanobind::handle dtype, const char* where);

// Options: None keeps the default. Swizzle: None/"auto", 0/"none", 32/"32B", 64/"64B",
// 128/"128B", "128B_atom_32B", ...; interleave: None/0/"none", 16/"16B", 32/"32B";
// l2_promotion: 0/"none", 64, 128, 256 (or "64B"...); oob_fill: "zero"/"none" or "nan".
// element_strides: a sequence of `rank` ints (row-major) or None.
TensorMapOptions parse_options(nanobind::handle element_strides, nanobind::handle interleave,
                               nanobind::handle swizzle, nanobind::handle l2_promotion,
                               nanobind::handle oob_fill, std::uint32_t rank, const char* where);

// Reads a sequence of exactly `rank` non-negative ints (`what` names it in errors).
void read_dims(nanobind::handle seq, std::uint64_t* out, std::uint32_t rank, const char* what,
               const char* where);
void read_box(nanobind::handle seq, std::uint32_t* out, std::uint32_t rank, const char* what,
              const char* where);
// The length of a sequence argument, at most 5 (else ValueError "rank must be ...").
std::uint32_t sequence_rank(nanobind::handle seq, const char* what, const char* where);

}  // namespace nanocuda::py
