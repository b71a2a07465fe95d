// Python bindings for TensorMap: tiled and im2col maps from tensors or raw pointers, address
// replacement, and the 128-byte round trip. Shapes are row-major, strides in bytes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <tuple>

#include "bindings.h"
#include "interop.h"
#include "nanocuda/detail/any_context.h"
#include "nanocuda/detail/check.h"
#include "nanocuda/detail/tiled_memo.h"
#include "nanocuda/tensor_map.h"
#include "fastcall_signature.h"
#include "py_int.h"
#include "py_tensor_map.h"
#include "tensor_map_args.h"
#include "tiled_args_memo.h"

namespace nb = nanobind;
using namespace nb::literals;

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

// What will be (or was) passed to the driver, back in row-major order, as a dict.
nb::dict geometry(const TensorMapDriverArgs& a, bool tiled) {
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

// A new Python TensorMap with the geometry it was built from (for repr, .geometry and
// replace_address); the other kind's members stay unset, since nothing reads them.
nb::object new_tensor_map(const TensorMap& map, PyTensorMap::Kind kind,
                          const TiledParams* tiled = nullptr, const Im2colParams* im2col = nullptr) {
  PyTensorMap* o = new_py_tensor_map(kind);
  if (!o) throw nb::python_error();
  o->set_map(map);
  if (tiled) new (&o->tiled) TiledParams(*tiled);
  if (im2col) new (&o->im2col) Im2colParams(*im2col);
  return nb::steal(reinterpret_cast<PyObject*>(o));
}

// The same for a tiled map encoded from `p` at `address`: the geometry is copied once,
// straight into the object, and encoded from there (the per-launch path).
nb::object new_tiled_map(const TiledParams& p, std::uint64_t address) {
  PyTensorMap* o = new_py_tensor_map(PyTensorMap::Kind::Tiled);
  if (!o) throw nb::python_error();
  nb::object owner = nb::steal(reinterpret_cast<PyObject*>(o));  // freed if encoding throws
  new (&o->tiled) TiledParams(p);
  o->tiled.address = address;
  o->set_map(TensorMap::tiled(o->tiled));
  return owner;
}

// Parsed tiled_from_pointer arguments, and the thread memo generation that last held their
// geometry: while it still does, the geometry comparison is skipped.
struct KnownTiled {
  TiledParams params;
  std::uint64_t generation = 0;
};

nb::object new_tiled_map(KnownTiled& k, std::uint64_t address) {
  PyTensorMap* o = new_py_tensor_map(PyTensorMap::Kind::Tiled);
  if (!o) throw nb::python_error();
  nb::object owner = nb::steal(reinterpret_cast<PyObject*>(o));
  new (&o->tiled) TiledParams(k.params);
  o->tiled.address = address;
  detail::TiledMemo& memo = detail::TiledMemo::for_this_thread();
  alignas(64) CUtensorMap map;
  if (k.generation != 0 && memo.generation() == k.generation && memo.at(address, map)) [[likely]] {
    std::memcpy(o->bytes, &map, 128);
    return owner;
  }
  o->set_map(TensorMap::tiled(o->tiled));  // validates, and leaves this geometry in the memo
  k.generation = memo.generation();
  return owner;
}

nb::object finish_tiled(const TiledParams& p, bool validate_only) {
  if (validate_only) return geometry(TensorMap::validate(p), true);
  return new_tensor_map(TensorMap::tiled(p), PyTensorMap::Kind::Tiled, &p);
}

nb::object finish_im2col(const Im2colParams& p, bool validate_only) {
  if (validate_only) return geometry(TensorMap::validate(p), false);
  return new_tensor_map(TensorMap::im2col(p), PyTensorMap::Kind::Im2col, nullptr, &p);
}

PyTensorMap& self_of(nb::handle h) {
  PyTensorMap* m = as_tensor_map(h.ptr());
  if (!m) throw nb::type_error("expected a nanocuda.TensorMap");
  return *m;
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
    if (!validate_only) [[likely]] return new_tiled_map(*known, ptr);
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
                 std::uint32_t pixels_per_column) {
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
    for (std::uint32_t j = 0; j < spatial; ++j) (*out)[j] = nb::cast<int>(t[j]);
  }
  p.channels_per_pixel = channels.is_none() ? static_cast<std::uint32_t>(p.shape[p.rank - 1])
                                            : nb::cast<std::uint32_t>(channels);
  p.pixels_per_column = pixels_per_column;
}

nb::object im2col(nb::handle tensor, std::uint32_t pixels_per_column, nb::handle channels,
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
                               nb::handle strides, std::uint32_t pixels_per_column,
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

std::string describe_map(nb::handle self) {
  const PyTensorMap& m = self_of(self);
  switch (m.kind) {
    case PyTensorMap::Kind::Tiled: {
      TiledParams p = m.tiled;
      p.options.swizzle = TensorMap::validate(p).swizzle;  // show the resolved "auto"
      return "TensorMap.tiled(" + describe(p) + ")";
    }
    case PyTensorMap::Kind::Im2col: {
      Im2colParams p = m.im2col;
      p.options.swizzle = TensorMap::validate(p).swizzle;
      return "TensorMap.im2col(" + describe(p) + ")";
    }
    default: return "TensorMap(<from bytes>)";
  }
}

nb::bytes to_bytes(nb::handle self) {
  return nb::bytes(reinterpret_cast<const char*>(self_of(self).bytes), 128);
}

// Test hook: the raw driver call, arguments innermost first exactly as cuda.h takes them,
// so tests can check nanocuda's descriptor is byte-identical.
nb::bytes encode_tiled_raw(int dtype, std::uint32_t rank, std::uint64_t ptr, nb::handle dims,
                           nb::handle strides, nb::handle box, nb::handle estr, int interleave,
                           int swizzle, int l2, int oob) {
  cuuint64_t d[5]{}, s[5]{};
  cuuint32_t b[5]{}, e[5]{};
  read_dims(dims, d, rank, "global_dim", "_encode_tiled_raw");
  if (rank > 1) read_dims(strides, s, rank - 1, "global_strides", "_encode_tiled_raw");
  read_box(box, b, rank, "box_dim", "_encode_tiled_raw");
  read_box(estr, e, rank, "element_strides", "_encode_tiled_raw");
  TensorMap m;
  NANOCUDA_CALL(cuTensorMapEncodeTiled, "_encode_tiled_raw", &m.native(),
                static_cast<CUtensorMapDataType>(dtype), rank,
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)), d, s, b, e,
                static_cast<CUtensorMapInterleave>(interleave),
                static_cast<CUtensorMapSwizzle>(swizzle), static_cast<CUtensorMapL2promotion>(l2),
                static_cast<CUtensorMapFloatOOBfill>(oob));
  return nb::bytes(static_cast<const char*>(m.data()), 128);
}

// TensorMap.tiled and tiled_from_pointer are called per kernel launch in seed-000 style
// loops, so they skip nanobind's generic keyword dispatch.
PyObject* tiled_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  try {
    static FastcallSignature<8> sig(kTiled, {"tensor", "box", "element_strides", "interleave",
                                             "swizzle", "l2_promotion", "oob_fill", "validate_only"}, 2);
    std::array<PyObject*, 8> a;
    sig.match(args, nargs, kwnames, a);
    if (!a[0]) sig.missing(0);
    if (!a[1]) sig.missing(1);
    bool vo = a[7] && PyObject_IsTrue(a[7]);
    return tiled(a.data(), vo).release().ptr();
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
}

PyObject* tiled_from_pointer_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                                  PyObject* kwnames) {
  try {
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
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
}

PyMethodDef g_tiled_def = {
    "tiled", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tiled_fast)),
    METH_FASTCALL | METH_KEYWORDS,
    "tiled(tensor, box, *, element_strides=None, interleave=None, swizzle=None, "
    "l2_promotion=None, oob_fill=None, validate_only=False)\n--\n\n"
    "A tiled map over a torch/CuPy tensor, Buffer (with dtype and shape), DLPack or CUDA-array-"
    "interface object; dtype, shape and strides are read from it. `box` is row-major."};

PyMethodDef g_tiled_from_pointer_def = {
    "tiled_from_pointer",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tiled_from_pointer_fast)),
    METH_FASTCALL | METH_KEYWORDS,
    "tiled_from_pointer(ptr, dtype, shape, strides_bytes=None, *, box, element_strides=None, "
    "interleave=None, swizzle=None, l2_promotion=None, oob_fill=None, validate_only=False)"
    "\n--\n\nA tiled map over raw device memory with explicit row-major geometry."};

// The floor under tiled_from_pointer: a METH_FASTCALL|METH_KEYWORDS function doing nothing.
PyObject* noop_fast(PyObject*, PyObject* const*, Py_ssize_t, PyObject*) { Py_RETURN_NONE; }
PyMethodDef g_noop_def = {
    "_noop_fastcall", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(noop_fast)),
    METH_FASTCALL | METH_KEYWORDS, "Does nothing; the Python call floor (profiling)."};

void add_static(nb::handle type, PyMethodDef* def) {
  nb::object fn = nb::steal(PyCFunction_NewEx(def, nullptr, nullptr));
  nb::object sm = nb::steal(PyStaticMethod_New(fn.ptr()));
  if (!fn.is_valid() || !sm.is_valid() || PyObject_SetAttrString(type.ptr(), def->ml_name, sm.ptr()))
    throw nb::python_error();
}

PyObject* tensor_map_repr(PyObject* self) {
  try {
    return PyUnicode_FromString(describe_map(nb::handle(self)).c_str());
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
}

PyType_Slot g_tensor_map_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(py_tensor_map_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(tensor_map_repr)},
    {Py_tp_richcompare, reinterpret_cast<void*>(py_tensor_map_richcompare)},
    {Py_tp_doc, const_cast<char*>("A TMA descriptor (CUtensorMap): 128 bytes passed to kernels "
                                  "by value as `const __grid_constant__ CUtensorMap`.")},
    {0, nullptr}};

PyType_Spec g_tensor_map_spec = {"nanocuda.TensorMap", sizeof(PyTensorMap), 0,
                                 Py_TPFLAGS_DEFAULT, g_tensor_map_slots};

}  // namespace

void bind_tensor_map(nb::module_& m) {
  auto opts = [] {
    return std::tuple{"element_strides"_a = nb::none(), "interleave"_a = nb::none(),
                      "swizzle"_a = nb::none(), "l2_promotion"_a = nb::none(),
                      "oob_fill"_a = nb::none(), "validate_only"_a = false};
  };
  auto [es, il, sw, l2, oob, vo] = opts();
  g_tensor_map_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&g_tensor_map_spec));
  if (!g_tensor_map_type) throw nb::python_error();
  nb::handle type(reinterpret_cast<PyObject*>(g_tensor_map_type));
  m.attr("TensorMap") = type;
  auto method = [&](const char* name, nb::object fn) { type.attr(name) = fn; };
  auto static_method = [&](const char* name, nb::object fn) {
    type.attr(name) = nb::steal(PyStaticMethod_New(fn.ptr()));
  };
  auto property = [&](const char* name, nb::object getter, const char* doc) {
    type.attr(name) = nb::module_::import_("builtins").attr("property")(getter, nb::none(),
                                                                        nb::none(), doc);
  };
  static_method("im2col", nb::cpp_function(&im2col, "tensor"_a, nb::kw_only(), "pixels_per_column"_a,
                  "channels_per_pixel"_a = nb::none(), "lower_corner"_a = nb::none(),
                  "upper_corner"_a = nb::none(), es, il, sw, l2, oob, vo, nb::name("im2col")));
  static_method("im2col_from_pointer",
                nb::cpp_function(&im2col_from_pointer, "ptr"_a, "dtype"_a, "shape"_a,
                  "strides_bytes"_a = nb::none(), nb::kw_only(), "pixels_per_column"_a,
                  "channels_per_pixel"_a = nb::none(), "lower_corner"_a = nb::none(),
                  "upper_corner"_a = nb::none(), es, il, sw, l2, oob, vo,
                  nb::name("im2col_from_pointer")));
  static_method("from_bytes", nb::cpp_function([](nb::bytes b) {
            if (b.size() != 128)
              throw ValueError("TensorMap.from_bytes: a tensor map is 128 bytes, got " +
                               std::to_string(b.size()));
            return new_tensor_map(TensorMap::from_bytes(std::span<const std::byte, 128>(
                                      static_cast<const std::byte*>(b.data()), 128)),
                                  PyTensorMap::Kind::Raw);
          }, "data"_a, nb::name("from_bytes")));
  method("replace_address", nb::cpp_function([](nb::handle self, nb::handle ptr_or_tensor) {
            PyTensorMap& tm = self_of(self);
            std::uint64_t p = device_pointer(ptr_or_tensor, -1, "TensorMap.replace_address");
            TensorMap map = tm.map();
            map.replace_address(p);
            tm.set_map(map);
            tm.tiled.address = p;
            tm.im2col.address = p;
          }, nb::is_method(), "ptr_or_tensor"_a, nb::name("replace_address"),
          "Point the map at new memory of the same geometry (no re-encode)."));
  method("to_bytes", nb::cpp_function(&to_bytes, nb::is_method(), nb::name("to_bytes")));
  method("__bytes__", nb::cpp_function(&to_bytes, nb::is_method(), nb::name("__bytes__")));
  property("address", nb::cpp_function([](nb::handle self) {
            const PyTensorMap& s = self_of(self);
            return s.kind == PyTensorMap::Kind::Im2col ? s.im2col.address : s.tiled.address;
          }), "The global address the map points at.");
  property("kind", nb::cpp_function([](nb::handle self) {
            const PyTensorMap& s = self_of(self);
            return s.kind == PyTensorMap::Kind::Tiled ? "tiled"
                   : s.kind == PyTensorMap::Kind::Im2col ? "im2col" : "raw";
          }), "'tiled', 'im2col', or 'raw' (made by from_bytes).");
  property("geometry", nb::cpp_function([](nb::handle self) -> nb::object {
            const PyTensorMap& s = self_of(self);
            if (s.kind == PyTensorMap::Kind::Tiled) return geometry(TensorMap::validate(s.tiled), true);
            if (s.kind == PyTensorMap::Kind::Im2col) return geometry(TensorMap::validate(s.im2col), false);
            return nb::none();
          }), "The driver arguments, row-major: dtype, shape, strides (bytes), box, swizzle, ...");
  add_static(type, &g_tiled_def);
  add_static(type, &g_tiled_from_pointer_def);
  m.attr("_noop_fastcall") = nb::steal(PyCFunction_NewEx(&g_noop_def, nullptr, nullptr));
  m.def("_tiled_memo_stats", [] {
          const auto& st = detail::TiledMemo::for_this_thread().stats;
          return nb::make_tuple(st.encodes, st.address_swaps, st.reuses);
        }, "(full encodes, address swaps, reuses) of TensorMap tiled maps on this thread (tests).");
  m.def("_tiled_memo_clear", [] { detail::TiledMemo::for_this_thread().clear(); },
        "Forgets this thread's remembered tiled geometry (tests, benchmarks of the miss path).");
  m.def("_tma_driver_ns", [](std::uint64_t ptr, int count) {
          // The driver's own cost, in a C++ loop: a full encode of the seed-001 map, and an
          // address swap on it (what a remembered geometry at a new address costs).
          const auto& api = detail::driver();
          detail::AnyContext context;
          const cuuint64_t dims[2] = {512, 512};
          const cuuint64_t strides[1] = {1024};
          const cuuint32_t box[2] = {64, 64}, elem[2] = {1, 1};
          alignas(128) CUtensorMap map;
          auto encode = [&](std::uint64_t p) {
            return api.cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                              reinterpret_cast<void*>(p), dims, strides, box, elem,
                                              CU_TENSOR_MAP_INTERLEAVE_NONE,
                                              CU_TENSOR_MAP_SWIZZLE_128B,
                                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
          };
          detail::check(encode(ptr), "cuTensorMapEncodeTiled", "_tma_driver_ns");
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < count; ++i) encode(ptr + 256 * (i & 15));
          auto t1 = std::chrono::steady_clock::now();
          for (int i = 0; i < count; ++i)
            api.cuTensorMapReplaceAddress(&map, reinterpret_cast<void*>(ptr + 256 * (i & 15)));
          auto t2 = std::chrono::steady_clock::now();
          auto ns = [&](auto a, auto b) {
            return std::chrono::duration<double, std::nano>(b - a).count() / count;
          };
          nb::dict d;
          d["encode"] = ns(t0, t1);
          d["replace_address"] = ns(t1, t2);
          return d;
        }, "ptr"_a, "count"_a, "Driver cost of encode vs address swap in a C++ loop (ns; bench).");
  m.def("_encode_tiled_raw", &encode_tiled_raw, "dtype"_a, "rank"_a, "ptr"_a, "global_dim"_a,
        "global_strides"_a, "box_dim"_a, "element_strides"_a, "interleave"_a, "swizzle"_a,
        "l2_promotion"_a, "oob_fill"_a);
}

}  // namespace nanocuda::py
