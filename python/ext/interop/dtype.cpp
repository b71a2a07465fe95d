// The element-type table shared by Buffer export, array import and tensor maps.
#include "interop/dtype.h"

#include <nanobind/stl/string.h>

#include <cstring>

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

struct Entry {
  DType dtype;
  const char* aliases[3];
};

const Entry kTypes[] = {
    {{{dlpack::kBool, 8, 1}, "bool", "|b1"}, {"bool_", "?", "b1"}},
    {{{dlpack::kInt, 8, 1}, "int8", "|i1"}, {"i1", "char", nullptr}},
    {{{dlpack::kUInt, 8, 1}, "uint8", "|u1"}, {"u1", "byte", nullptr}},
    {{{dlpack::kInt, 16, 1}, "int16", "<i2"}, {"i2", "short", nullptr}},
    {{{dlpack::kUInt, 16, 1}, "uint16", "<u2"}, {"u2", nullptr, nullptr}},
    {{{dlpack::kInt, 32, 1}, "int32", "<i4"}, {"i4", "int", nullptr}},
    {{{dlpack::kUInt, 32, 1}, "uint32", "<u4"}, {"u4", nullptr, nullptr}},
    {{{dlpack::kInt, 64, 1}, "int64", "<i8"}, {"i8", "long", nullptr}},
    {{{dlpack::kUInt, 64, 1}, "uint64", "<u8"}, {"u8", nullptr, nullptr}},
    {{{dlpack::kFloat, 16, 1}, "float16", "<f2"}, {"f2", "half", nullptr}},
    {{{dlpack::kBfloat, 16, 1}, "bfloat16", "<V2"}, {"bf16", nullptr, nullptr}},
    {{{dlpack::kFloat, 32, 1}, "float32", "<f4"}, {"f4", "float", nullptr}},
    {{{dlpack::kFloat, 64, 1}, "float64", "<f8"}, {"f8", "double", nullptr}},
    {{{dlpack::kComplex, 64, 1}, "complex64", "<c8"}, {"c8", "cfloat", nullptr}},
    {{{dlpack::kComplex, 128, 1}, "complex128", "<c16"}, {"c16", "cdouble", nullptr}},
    {{{dlpack::kFloat8_e4m3fn, 8, 1}, "float8_e4m3fn", "|V1"}, {nullptr, nullptr, nullptr}},
    {{{dlpack::kFloat8_e5m2, 8, 1}, "float8_e5m2", "|V1"}, {nullptr, nullptr, nullptr}},
};

const DType* by_name(const std::string& name) {
  for (const auto& e : kTypes) {
    if (name == e.dtype.name) return &e.dtype;
    for (const char* alias : e.aliases)
      if (alias && name == alias) return &e.dtype;
  }
  return nullptr;
}

}  // namespace

DType parse_dtype(nb::handle obj) {
  std::string name;
  if (nb::isinstance<nb::str>(obj)) {
    name = nb::cast<std::string>(obj);
  } else if (PyType_Check(obj.ptr())) {
    name = nb::cast<std::string>(obj.attr("__name__"));  // numpy scalar types: np.float16
  } else if (nb::hasattr(obj, "is_floating_point") || nb::hasattr(obj, "itemsize")) {
    // torch.dtype prints as "torch.float16"; numpy dtypes have .name.
    name = nb::cast<std::string>(nb::str(nb::hasattr(obj, "name") ? obj.attr("name") : obj));
  } else {
    name = nb::cast<std::string>(nb::str(obj));
  }
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  if (const DType* d = by_name(name)) return *d;
  throw nb::type_error(("unsupported dtype " + name + ": nanocuda knows bool, (u)int8-64, "
                        "float16, bfloat16, float32, float64, complex64/128 and float8")
                           .c_str());
}

DType dtype_from_dlpack(dlpack::DataType dl) {
  for (const auto& e : kTypes)
    if (e.dtype.dl.code == dl.code && e.dtype.dl.bits == dl.bits && dl.lanes == 1) return e.dtype;
  throw nb::type_error(("unsupported DLPack dtype (code " + std::to_string(dl.code) + ", " +
                        std::to_string(dl.bits) + " bits, " + std::to_string(dl.lanes) +
                        " lanes)")
                           .c_str());
}

DType dtype_from_typestr(const std::string& typestr) {
  for (const auto& e : kTypes)
    if (typestr.size() > 1 && std::strcmp(e.dtype.typestr + 1, typestr.c_str() + 1) == 0 &&
        typestr[1] != 'V')
      return e.dtype;
  throw nb::type_error(("unsupported __cuda_array_interface__ typestr " + typestr).c_str());
}

}  // namespace nanocuda::py
