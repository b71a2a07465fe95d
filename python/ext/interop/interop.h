// Reading foreign arrays and streams: nanocuda Buffers, torch tensors, DLPack,
// __cuda_array_interface__, __array_interface__ and __cuda_stream__ objects.
#pragma once

#include <nanobind/nanobind.h>

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nanocuda/core/array_view.h"
#include "nanocuda/core/dlpack.h"
#include "interop/dtype.h"
#include "core/py_stream.h"
#include "nanocuda/core/stream.h"

namespace nanocuda::py {

// What an array-like object says about its memory: the core's model, produced here from
// Python objects.
using nanocuda::ArrayView;

// The full description of an array (device or host). `where` names the calling API in
// errors, e.g. "TensorMap.tiled". Raises TypeError for objects that are not arrays.
ArrayView describe_array(nanobind::handle obj, const char* where);

// describe_array through the object's DLPack export when it has one (StridedMemoryView.from_dlpack),
// even where nanocuda's order would read another protocol first.
ArrayView describe_array_dlpack(nanobind::handle obj, const char* where);

// describe_array without asking the driver which device a __cuda_array_interface__ pointer
// is on (device_id is -1 for those): for callers that need only the geometry, and so that
// geometry inference works, and is testable, with no driver.
ArrayView describe_array_geometry(nanobind::handle obj, const char* where);

// Whether `obj` is a torch tensor (decided once per Python type), for callers with a
// faster torch-specific path.
bool is_torch_tensor(nanobind::handle obj);

// The device address behind `obj` (a Buffer, a torch tensor, a DLPack or CUDA-array-interface
// object, or an int when `allow_int`), checked to live on device `device` (-1: any CUDA
// device). A CPU tensor or one on another device raises ValueError naming `where`.
// Decisions per Python type are cached, so repeated calls on one type are cheap.
uint64_t device_pointer(nanobind::handle obj, int device, const char* where, bool allow_int = true);

// How many bytes may be written at `obj`'s address: a Buffer's size, an array's extent;
// nullopt for a raw int address (unknown). A read-only array is a ValueError naming `where`.
std::optional<std::size_t> extent_of(nanobind::handle obj, const char* where);

// Whether `obj` exposes a device pointer by any protocol nanocuda reads (without reading it).
bool has_device_pointer(nanobind::handle obj);

// Adopts a stream: a nanocuda Stream, an object with __cuda_stream__ (CuPy, cuda.core), or a
// torch.cuda.Stream (its .cuda_stream). A bare int is a TypeError (Stream.from_handle adopts one).
// A nanocuda Stream's view is valid while the Python object lives (what keeps it past the call
// holds a KeptStream); a foreign stream's is a plain StreamRef.
StreamRef to_stream(nanobind::handle obj, const char* where);
// to_stream's obj.__cuda_stream__() (stream_args.cpp): its ValueError (a GraphBuilder not
// building) reported naming `call`.
nanobind::object call_cuda_stream(nanobind::handle obj, const std::string& call);
// cuda.core 1.2's DeprecationWarning for a foreign __cuda_stream__ object passed to launch()
// (its users filter on the words); nanocuda's, cuda.core's, torch's and CuPy's types are not foreign.
void warn_foreign_stream(nanobind::handle obj);

// The consumer stream of Buffer.__dlpack__(stream=): None/-1 none; 1, 2 and CUstream handles
// as the DLPack standard says; 0, negatives and ints that cannot be handles are ValueErrors.
std::optional<StreamRef> dlpack_consumer_stream(nanobind::handle stream, int ordinal);

}  // namespace nanocuda::py
