// Element types from Python objects (names, numpy and torch dtypes) via the core table.
#include "interop/dtype.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace nanocuda::py {

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
  if (const DType* d = find_dtype(name)) return *d;
  throw nb::type_error(("unsupported dtype " + name + ": nanocuda knows " + known_dtypes()).c_str());
}

DType dtype_from_dlpack(dlpack::DataType dl) {
  if (const DType* d = find_dtype(dl)) return *d;
  throw nb::type_error(("unsupported DLPack dtype (code " + std::to_string(dl.code) + ", " +
                        std::to_string(dl.bits) + " bits, " + std::to_string(dl.lanes) +
                        " lanes)")
                           .c_str());
}

DType dtype_from_typestr(const std::string& typestr) {
  if (const DType* d = find_dtype_typestr(typestr)) return *d;
  throw nb::type_error(("unsupported __cuda_array_interface__ typestr " + typestr).c_str());
}

}  // namespace nanocuda::py
