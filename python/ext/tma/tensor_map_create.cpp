// TensorMap creation from Python: tiled maps (the per-launch fastcall paths, with their
// argument memos) and im2col maps, from tensors or raw pointers.
#include "tma/tensor_map_create.h"

#include <nanobind/stl/string.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>

#include "bindings.h"
#include "fastpath/fastcall_signature.h"
#include "fastpath/fastcall.h"
#include "nanocuda/driver/error.h"
#include "fastpath/py_int.h"
#include "core/py_size.h"
#include "tma/tensor_map_args.h"
#include "tma/tiled_args_memo.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

constexpr const char* kTiled = "TensorMap.tiled";
constexpr const char* kIm2col = "TensorMap.im2col";

nb::handle opt(PyObject* o) { return o ? nb::handle(o) : nb::handle(Py_None); }

template <class T>
nb::tuple to_tuple(const T* values, std::uint32_t n) {
  nb::object t = nb::steal(PyTuple_New(n));
  for (std::uint32_t i = 0; i < n; ++i)
    PyTuple_SET_ITEM(t.ptr(), i, nb::cast(values[i]).release().ptr());
  return nb::borrow<nb::tuple>(t);
}

}  // namespace

nb::dict tensor_map_geometry(const TensorMapDriverArgs& a, bool tiled) {
  const std::uint32_t r = a.rank;
  std::uint64_t shape[kTensorMapMaxRank], strides[kTensorMapMaxRank];
  std::uint32_t box[kTensorMapMaxRank], estr[kTensorMapMaxRank];
  for (std::uint32_t i = 0; i < r; ++i) {
    shape[i] = a.global_dim[r - 1 - i];
    box[i] = a.box_dim[r - 1 - i];
    estr[i] = a.element_strides[r - 1 - i];
    strides[i] = i + 1 < r ? a.global_strides[r - 2 - i]
                           : static_cast<std::uint64_t>(tensor_map_element_bits(a.dtype) / 8);
  }
  nb::dict d;
  d["kind"] = tiled ? "tiled" : "im2col";
  d["dtype"] = tensor_map_dtype_name(a.dtype);
  d["address"] = reinterpret_cast<std::uintptr_t>(a.address);
  d["shape"] = to_tuple(shape, r);
  d["strides"] = to_tuple(strides, r);
  if (tiled) {
    d["box"] = to_tuple(box, r);
  } else {
    int lower[3], upper[3];
    for (std::uint32_t j = 0; j + 2 < r; ++j) {
      lower[j] = a.lower_corner[r - 3 - j];
      upper[j] = a.upper_corner[r - 3 - j];
    }
    d["lower_corner"] = to_tuple(lower, r - 2);
    d["upper_corner"] = to_tuple(upper, r - 2);
    d["channels_per_pixel"] = a.channels_per_pixel;
    d["pixels_per_column"] = a.pixels_per_column;
  }
  d["element_strides"] = to_tuple(estr, r);
  d["interleave"] = interleave_name(a.interleave);
  d["swizzle"] = swizzle_name(a.swizzle);
  d["l2_promotion"] = l2_promotion_name(a.l2_promotion);
  d["oob_fill"] = oob_fill_name(a.oob_fill);
  return d;
}

nb::object new_tensor_map(const TensorMap& map, PyTensorMap::Kind kind, const TiledParams* tiled,
                          const Im2colParams* im2col) {
  PyTensorMap* o = new_py_tensor_map(kind);
  if (!o) throw nb::python_error();
  o->set_map(map);
  // A raw map (from_bytes) reports address 0: its `tiled` is read by .address.
  new (&o->tiled) TiledParams(tiled ? *tiled : TiledParams());
  if (im2col) new (&o->im2col) Im2colParams(*im2col);
  return nb::steal(reinterpret_cast<PyObject*>(o));
}

namespace {

// A tiled map encoded from `p` at `address`: the geometry is copied once, straight into the
// object, and encoded from there (the per-launch path). With `generation` (the generation of
// the thread's descriptor cache that last held `p`'s geometry, kept by the caller), the
// geometry comparison is skipped while the cache still holds it.
nb::object new_tiled_map(const TiledParams& p, std::uint64_t address,
                         std::uint64_t* generation = nullptr) {
  PyTensorMap* o = new_py_tensor_map(PyTensorMap::Kind::Tiled);
  if (!o) throw nb::python_error();
  nb::object owner = nb::steal(reinterpret_cast<PyObject*>(o));  // freed if encoding throws
  new (&o->tiled) TiledParams(p);
  o->tiled.address = address;
  if (generation && *generation != 0) [[likely]] {
    alignas(64) CUtensorMap map;
    if (TensorMap::tiled_from_memo(*generation, address, map)) [[likely]] {
      std::memcpy(o->bytes, &map, 128);
      return owner;
    }
  }
  o->set_map(TensorMap::tiled(o->tiled));  // validates, and leaves this geometry in the cache
  if (generation) *generation = TensorMap::tiled_memo_generation();
  return owner;
}

// Parsed tiled_from_pointer arguments, and the cache generation for new_tiled_map.
struct KnownTiled {
  TiledParams params;
  std::uint64_t generation = 0;
};

nb::object finish_tiled(const TiledParams& p, bool validate_only) {
  if (validate_only) return tensor_map_geometry(TensorMap::validate(p), true);
  return new_tensor_map(TensorMap::tiled(p), PyTensorMap::Kind::Tiled, &p);
}

nb::object finish_im2col(const Im2colParams& p, bool validate_only) {
  if (validate_only) return tensor_map_geometry(TensorMap::validate(p), false);
  return new_tensor_map(TensorMap::im2col(p), PyTensorMap::Kind::Im2col, nullptr, &p);
}


// What tiled() parses besides the tensor: the box and options, for a given rank.
struct TiledExtras {
  std::uint32_t rank = 0;
  TensorMapBox box{};
  TensorMapOptions options{};
};

// args: tensor, box, element_strides, interleave, swizzle, l2_promotion, oob_fill.
nb::object tiled(PyObject* const* a, bool validate_only) {
  static ArgsMemo<6, TiledExtras> memo;
  const TensorGeometry g = tensor_geometry(a[0], kTiled);
  const ArgsMemo<6, TiledExtras>::Key key{a[1], a[2], a[3], a[4], a[5], a[6]};
  const TiledExtras* extras = memo.find(key);
  TiledExtras parsed;
  if (!extras || extras->rank != g.rank) {
    parsed.rank = g.rank;
    read_box(a[1], parsed.box.data(), g.rank, "box", kTiled);
    parsed.options = parse_options(opt(a[2]), opt(a[3]), opt(a[4]), opt(a[5]), opt(a[6]), g.rank, kTiled);
    memo.store(key, parsed);
    extras = &parsed;
  }
  const TiledParams p{g.dtype, g.rank, g.ptr, g.shape, g.strides, extras->box, extras->options};
  if (validate_only) return finish_tiled(p, true);
  return new_tiled_map(p, p.address);
}

// args: ptr (already read), dtype, shape, strides_bytes, box, element_strides, interleave,
// swizzle, l2_promotion, oob_fill.
nb::object tiled_from_pointer(std::uint64_t ptr, PyObject* const* a, bool validate_only) {
  static ArgsMemo<9, KnownTiled> memo;
  const ArgsMemo<9, KnownTiled>::Key key{a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]};
  if (KnownTiled* known = memo.find(key)) {
    if (!validate_only) [[likely]] return new_tiled_map(known->params, ptr, &known->generation);
    TiledParams p = known->params;
    p.address = ptr;
    return finish_tiled(p, true);
  }
  TiledParams p;
  p.dtype = parse_tma_dtype(a[1], kTiled);
  p.rank = sequence_rank(a[2], "shape", kTiled);
  read_dims(a[2], p.shape.data(), p.rank, "shape", kTiled);
  if (a[3] && a[3] != Py_None) read_dims(a[3], p.strides.data(), p.rank, "strides_bytes", kTiled);
  read_box(a[4], p.box.data(), p.rank, "box", kTiled);
  p.options = parse_options(opt(a[5]), opt(a[6]), opt(a[7]), opt(a[8]), opt(a[9]), p.rank, kTiled);
  memo.store(key, KnownTiled{p}, 0);
  p.address = ptr;
  return finish_tiled(p, validate_only);
}

void fill_im2col(Im2colParams& p, nb::handle lower, nb::handle upper, nb::handle channels,
                 nb::handle pixels_per_column) {
  // Required, keyword-only; bound with a None default so a missing one is named here (its
  // range, 1..1024, is checked with the other im2col rules).
  if (!pixels_per_column.is_valid() || pixels_per_column.is_none())
    throw nb::type_error((std::string(kIm2col) + ": pixels_per_column is required (keyword-only: the pixels "
                          "one column gathers, 1..1024)").c_str());
  if (p.rank < 3)
    throw ValueError(std::string(kIm2col) + ": rank must be 3..5 (N, spatial dims, C), got " +
                     std::to_string(p.rank));
  const std::uint32_t spatial = p.rank - 2;
  // Corners are signed (negative: padding), so they are read here, not with read_box.
  for (auto [seq, out, name] : {std::tuple{lower, &p.lower_corner, "lower_corner"},
                                std::tuple{upper, &p.upper_corner, "upper_corner"}}) {
    if (seq.is_none()) continue;
    nb::object as_tuple = nb::steal(PySequence_Tuple(seq.ptr()));
    if (!as_tuple.is_valid()) throw nb::python_error();
    nb::tuple t = nb::borrow<nb::tuple>(as_tuple);
    if (t.size() != spatial)
      throw ValueError(std::string(kIm2col) + ": " + name + " has " + std::to_string(t.size()) +
                       " entries, but a rank-" + std::to_string(p.rank) + " tensor has " +
                       std::to_string(spatial) + " spatial dims");
    for (std::uint32_t j = 0; j < spatial; ++j)
      (*out)[j] = static_cast<int>(int_arg(t[j], kIm2col, name, INT32_MIN, INT32_MAX));
  }
  p.channels_per_pixel = channels.is_none() ? static_cast<std::uint32_t>(p.shape[p.rank - 1])
                                            : static_cast<std::uint32_t>(int_arg(channels, kIm2col, "channels_per_pixel", 0, UINT32_MAX));
  p.pixels_per_column = static_cast<std::uint32_t>(int_arg(pixels_per_column, kIm2col, "pixels_per_column", 0, UINT32_MAX));
}

}  // namespace

// StridedMemoryView.as_tensor_map(box)'s map: cuda.core's defaults (no interleave, swizzle or
// L2 promotion; zero fill) as the same string objects every call, so tiled()'s memo holds.
nb::object tiled_cuda_core_defaults(PyObject* tensor, PyObject* box) {
  static PyObject* none = PyUnicode_InternFromString("none");  // held for the process
  static PyObject* zero = PyUnicode_InternFromString("zero");
  if (!none || !zero) throw nb::python_error();
  PyObject* const a[7] = {tensor, box, nullptr, none, none, none, zero};
  return tiled(a, false);
}

nb::object im2col(nb::handle tensor, nb::handle pixels_per_column, nb::handle channels,
                  nb::handle lower, nb::handle upper, nb::handle element_strides,
                  nb::handle interleave, nb::handle swizzle, nb::handle l2_promotion,
                  nb::handle oob_fill, bool validate_only) {
  TensorGeometry g = tensor_geometry(tensor, kIm2col);
  Im2colParams p;
  p.dtype = g.dtype;
  p.rank = g.rank;
  p.address = g.ptr;
  p.shape = g.shape;
  p.strides = g.strides;
  fill_im2col(p, lower, upper, channels, pixels_per_column);
  p.options = parse_options(element_strides, interleave, swizzle, l2_promotion, oob_fill, g.rank, kIm2col);
  return finish_im2col(p, validate_only);
}

nb::object im2col_from_pointer(std::uint64_t ptr, nb::handle dtype, nb::handle shape,
                               nb::handle strides, nb::handle pixels_per_column,
                               nb::handle channels, nb::handle lower, nb::handle upper,
                               nb::handle element_strides, nb::handle interleave,
                               nb::handle swizzle, nb::handle l2_promotion, nb::handle oob_fill,
                               bool validate_only) {
  Im2colParams p;
  p.dtype = parse_tma_dtype(dtype, kIm2col);
  p.rank = sequence_rank(shape, "shape", kIm2col);
  p.address = ptr;
  read_dims(shape, p.shape.data(), p.rank, "shape", kIm2col);
  if (!strides.is_none()) read_dims(strides, p.strides.data(), p.rank, "strides_bytes", kIm2col);
  fill_im2col(p, lower, upper, channels, pixels_per_column);
  p.options = parse_options(element_strides, interleave, swizzle, l2_promotion, oob_fill, p.rank, kIm2col);
  return finish_im2col(p, validate_only);
}

namespace {

// TensorMap.tiled and tiled_from_pointer are called per kernel launch in seed-000 style
// loops, so they skip nanobind's generic keyword dispatch.
PyObject* tiled_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static FastcallSignature<8> sig(kTiled, {"tensor", "box", "element_strides", "interleave",
                                           "swizzle", "l2_promotion", "oob_fill", "validate_only"}, 2);
  std::array<PyObject*, 8> a;
  sig.match(args, nargs, kwnames, a);
  if (!a[0]) sig.missing(0);
  if (!a[1]) sig.missing(1);
  bool vo = a[7] && PyObject_IsTrue(a[7]);
  return tiled(a.data(), vo).release().ptr();
}

PyObject* tiled_from_pointer_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                                  PyObject* kwnames) {
  static FastcallSignature<11> sig("TensorMap.tiled_from_pointer",
                                   {"ptr", "dtype", "shape", "strides_bytes", "box",
                                    "element_strides", "interleave", "swizzle", "l2_promotion",
                                    "oob_fill", "validate_only"}, 4);
  std::array<PyObject*, 11> a;
  sig.match(args, nargs, kwnames, a);
  if (!a[0]) sig.missing(0);
  if (!a[1]) sig.missing(1);
  if (!a[2]) sig.missing(2);
  if (!a[4]) sig.missing(4);
  long long small;
  std::uint64_t ptr;
  if (PyLong_CheckExact(a[0]) && read_small_int(a[0], &small) && small >= 0) [[likely]] {
    ptr = static_cast<std::uint64_t>(small);
  } else {
    ptr = PyLong_AsUnsignedLongLong(a[0]);
    if (PyErr_Occurred()) throw nb::python_error();
  }
  bool vo = a[10] && PyObject_IsTrue(a[10]);
  return tiled_from_pointer(ptr, a.data(), vo).release().ptr();
}

}  // namespace

PyMethodDef g_tiled_def = fastcall_method<tiled_fast>(
    "tiled",
    "tiled(tensor, box, *, element_strides=None, interleave=None, swizzle=None, "
    "l2_promotion=None, oob_fill=None, validate_only=False)\n--\n\n"
    "A tiled map over a torch/CuPy tensor, Buffer (with dtype and shape), DLPack or CUDA-array-"
    "interface object; dtype, shape and strides are read from it. `box` is row-major.");

PyMethodDef g_tiled_from_pointer_def = fastcall_method<tiled_from_pointer_fast>(
    "tiled_from_pointer",
    "tiled_from_pointer(ptr, dtype, shape, strides_bytes=None, *, box, element_strides=None, "
    "interleave=None, swizzle=None, l2_promotion=None, oob_fill=None, validate_only=False)"
    "\n--\n\nA tiled map over raw device memory with explicit row-major geometry.");


}  // namespace nanocuda::py
