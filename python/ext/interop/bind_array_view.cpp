// StridedMemoryView's C++ side: the core's dtype table and contiguity rule, and a view's DLPack export.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/py_buffer.h"
#include "nanocuda/core/array_view.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_array_view(nb::module_& m) {
  nb::module_ internal = internal_module(m);
  internal.def("dtype_table", [] {
        nb::list out;
        for (const DType& t : dtype_table())
          out.append(nb::make_tuple(t.name, t.dl.code, t.dl.bits, t.dl.lanes, t.typestr));
        return out;
      },
      "[(name, DLPack code, bits, lanes, typestr)] of every element type nanocuda knows: the "
      "core's one table (StridedMemoryView and torch_ops read it).");
  internal.def("is_contiguous",
      [](const std::vector<int64_t>& shape, const std::optional<std::vector<int64_t>>& strides) {
        if (strides && strides->size() != shape.size())
          throw nb::value_error("is_contiguous: strides and shape differ in length");
        return nanocuda::is_contiguous(static_cast<int>(shape.size()), shape.data(),
                                       strides ? strides->data() : nullptr);
      },
      nb::arg("shape"), nb::arg("strides").none(),
      "C-contiguity by the core's rule (torch's: size-1 and size-0 dimensions impose nothing); "
      "strides in elements, None for compact.");
  internal.def("export_view",
      [](nb::handle owner, uint64_t ptr, int32_t device_type, int32_t device_id,
         const std::string& dtype, std::vector<int64_t> shape, std::vector<int64_t> strides,
         nb::handle max_version, bool readonly, const char* where) {
        const DType* t = find_dtype(dtype);
        if (!t)
          throw nb::buffer_error((std::string(where) + ": Unsupported dtype for DLPack export: " + dtype +
                                  " (nanocuda exports " + known_dtypes() + ")").c_str());
        return export_dlpack_strided(owner, reinterpret_cast<void*>(ptr), {device_type, device_id}, *t,
                                     std::move(shape), std::move(strides), max_version, readonly, where);
      },
      nb::arg("owner"), nb::arg("ptr"), nb::arg("device_type"), nb::arg("device_id"), nb::arg("dtype"),
      nb::arg("shape"), nb::arg("strides"), nb::arg("max_version").none(), nb::arg("readonly"),
      nb::arg("where"),
      "A DLPack capsule of strided memory (strides in elements) that keeps `owner` alive while "
      "a consumer holds it.");
}

}  // namespace nanocuda::py
