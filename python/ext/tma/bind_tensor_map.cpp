// Python bindings for TensorMap: the type, its methods and properties (address replacement,
// the 128-byte round trip, geometry). Creation is in tensor_map_create.cpp.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>

#include "bindings.h"
#include "interop/interop.h"
#include "core/py_device.h"
#include "nanocuda/core/address_device.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tma_names.h"
#include "nanocuda/tma/tensor_map.h"
#include "tma/py_tensor_map.h"
#include "tma/tensor_map_args.h"
#include "tma/tensor_map_create.h"
#include "fastpath/fastcall.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace nanocuda::py {

namespace {

PyTensorMap& self_of(nb::handle h) {
  PyTensorMap* m = as_tensor_map(h.ptr());
  if (!m) throw nb::type_error("expected a nanocuda.TensorMap");
  return *m;
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

// cuda.core's repr, "TensorMapDescriptor(tiled, rank=2, dtype=FLOAT32, swizzle=SWIZZLE_128B)",
// which code written for cuda.core may match; str() keeps the full geometry (describe_map).
std::string cuda_core_repr(nb::handle self) {
  const PyTensorMap& m = self_of(self);
  if (m.kind == PyTensorMap::Kind::Raw) return "TensorMapDescriptor(raw)";
  bool tiled = m.kind == PyTensorMap::Kind::Tiled;
  int swizzle = tiled ? TensorMap::validate(m.tiled).swizzle : TensorMap::validate(m.im2col).swizzle;
  auto upper = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return t;
  };
  std::string sw = upper(tma_enum_name(TmaEnum::Swizzle, swizzle));
  if (sw != "NONE") sw = "SWIZZLE_" + sw;
  return std::string("TensorMapDescriptor(") + (tiled ? "tiled" : "im2col") +
         ", rank=" + std::to_string(tiled ? m.tiled.rank : m.im2col.rank) +
         ", dtype=" + upper(tma_enum_name(TmaEnum::DataType, tiled ? m.tiled.dtype : m.im2col.dtype)) +
         ", swizzle=" + sw + ")";
}

PyObject* tensor_map_repr(PyObject* self) {
  return PyUnicode_FromString(cuda_core_repr(nb::handle(self)).c_str());
}

PyObject* tensor_map_str(PyObject* self) {
  return PyUnicode_FromString(describe_map(nb::handle(self)).c_str());
}

// Maps come from TensorMap.tiled/im2col/from_bytes (or StridedMemoryView.as_tensor_map), as
// cuda.core's TensorMapDescriptor() refuses direct construction: an empty map is no descriptor.
PyObject* tensor_map_new(PyTypeObject*, PyObject*, PyObject*) {
  throw nb::builtin_exception(nb::exception_type::runtime_error,
                              "TensorMap objects cannot be instantiated directly (TensorMapDescriptor()); create "
                              "one with TensorMap.tiled(), TensorMap.im2col(), TensorMap.from_bytes() or "
                              "StridedMemoryView.as_tensor_map()");
}

PyType_Slot g_tensor_map_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(py_tensor_map_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(guarded<tensor_map_repr>)},
    {Py_tp_str, reinterpret_cast<void*>(guarded<tensor_map_str>)},
    {Py_tp_new, reinterpret_cast<void*>(guarded<tensor_map_new>)},
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
  static_method("im2col", nb::cpp_function(&im2col, "tensor"_a, nb::kw_only(), "pixels_per_column"_a = nb::none(),
                  "channels_per_pixel"_a = nb::none(), "lower_corner"_a = nb::none(),
                  "upper_corner"_a = nb::none(), es, il, sw, l2, oob, vo, nb::name("im2col"),
                  "An im2col descriptor (convolutions) for a tensor's memory, read like tiled()."));
  static_method("im2col_from_pointer",
                nb::cpp_function(&im2col_from_pointer, "ptr"_a, "dtype"_a, "shape"_a,
                  "strides_bytes"_a = nb::none(), nb::kw_only(), "pixels_per_column"_a = nb::none(),
                  "channels_per_pixel"_a = nb::none(), "lower_corner"_a = nb::none(),
                  "upper_corner"_a = nb::none(), es, il, sw, l2, oob, vo,
                  nb::name("im2col_from_pointer"),
                  "An im2col descriptor from a raw address, dtype, shape and byte strides."));
  static_method("from_bytes", nb::cpp_function([](nb::handle data) {
            if (!PyBytes_Check(data.ptr()) && !PyByteArray_Check(data.ptr()))
              throw nb::type_error((std::string("TensorMap.from_bytes: data must be bytes (the 128 descriptor bytes "
                                                "to_bytes() gives), got ") + Py_TYPE(data.ptr())->tp_name).c_str());
            nb::bytes b = nb::steal<nb::bytes>(PyBytes_FromObject(data.ptr()));
            if (!b.is_valid()) throw nb::python_error();
            if (b.size() != 128)
              throw ValueError("TensorMap.from_bytes: a tensor map is 128 bytes, got " +
                               std::to_string(b.size()));
            return new_tensor_map(TensorMap::from_bytes(std::span<const std::byte, 128>(
                                      static_cast<const std::byte*>(b.data()), 128)),
                                  PyTensorMap::Kind::Raw);
          }, "data"_a.none(), nb::name("from_bytes"), "A map from its 128 descriptor bytes (as to_bytes() gives)."));
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
  method("to_bytes", nb::cpp_function(&to_bytes, nb::is_method(), nb::name("to_bytes"),
                                      "The 128 descriptor bytes the kernel receives."));
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
            if (s.kind == PyTensorMap::Kind::Tiled) return tensor_map_geometry(TensorMap::validate(s.tiled), true);
            if (s.kind == PyTensorMap::Kind::Im2col) return tensor_map_geometry(TensorMap::validate(s.im2col), false);
            return nb::none();
          }), "The driver arguments, row-major: dtype, shape, strides (bytes), box, swizzle, ...");
  property("device", nb::cpp_function([](nb::handle self) -> nb::object {
            // Asked of the driver when read, so creating a map (the TMA hot path) costs nothing more.
            const PyTensorMap& s = self_of(self);
            std::uint64_t a = s.kind == PyTensorMap::Kind::Im2col ? s.im2col.address : s.tiled.address;
            auto ordinal = a ? device_of_address(a, "TensorMap.device") : std::nullopt;
            if (!ordinal) {
              char text[32];
              std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(a));
              throw ValueError(std::string("TensorMap.device: the driver places the map's address ") + text +
                               " on no device (a map from bytes, or memory the driver does not know)");
            }
            return device_object(*ordinal);
          }), "The Device whose memory the map reads (cuda.core's TensorMapDescriptor.device).");
  install_method(type, &g_tiled_def, true);
  install_method(type, &g_tiled_from_pointer_def, true);
}

}  // namespace nanocuda::py
