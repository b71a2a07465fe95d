// _testing hooks of interop: what nanocuda reads from foreign objects (device pointers, array
// descriptions, dtypes, DLPack exchange reads and their cost), for tests and debugging.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>

#include "bindings.h"
#include "interop/dlpack_exchange.h"
#include "interop/interop.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_interop_hooks(nb::module_& parent) {
  nb::module_ m = testing_module(parent);
  m.def("device_pointer", [](nb::handle obj, int device) {
    return device_pointer(obj, device, "device_pointer");
  }, nb::arg("obj"), nb::arg("device") = -1);
  m.def("describe_array", [](nb::handle obj) {
    ArrayView v = describe_array(obj, "describe_array");
    nb::dict d;
    d["ptr"] = v.ptr;
    d["device_type"] = v.device_type;
    d["device_id"] = v.device_id;
    d["dtype"] = v.dtype.name;
    d["shape"] = nb::tuple(nb::cast(v.shape));
    d["strides"] = nb::tuple(nb::cast(v.strides));
    d["contiguous"] = v.is_contiguous();
    return d;
  }, nb::arg("obj"));
  m.def("exchange_read_ns", [](nb::handle obj, int count) {
    // Cost of one DLPack-exchange read of `obj` (nanosecond average over `count`); -1 when
    // its type has no exchange API. For benchmarking the launch path's tensor reads.
    TensorViewReader read = exchange_reader(Py_TYPE(obj.ptr()));
    if (!read) return -1.0;
    dlpack::Tensor t;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
      if (read(obj.ptr(), &t) != 0) throw nb::python_error();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / count;
  }, nb::arg("obj"), nb::arg("count"));
  m.def("parse_dtype", [](nb::handle obj) { return parse_dtype(obj).name; }, nb::arg("dtype"));
  m.def("read_tensor", [](nb::handle obj) -> nb::object {
          // What the type's current reader reports, for tests comparing readers.
          TensorViewReader read = exchange_reader(Py_TYPE(obj.ptr()));
          if (!read) return nb::none();
          dlpack::Tensor v;
          if (read(obj.ptr(), &v) != 0) throw nb::python_error();
          nb::list shape, strides;
          for (int i = 0; i < v.ndim; ++i) {
            shape.append(v.shape[i]);
            if (v.strides) strides.append(v.strides[i]);
          }
          nb::dict d;
          d["address"] = reinterpret_cast<std::uintptr_t>(v.data) + v.byte_offset;
          d["device"] = nb::make_tuple(v.device.device_type, v.device.device_id);
          d["dtype"] = nb::make_tuple(v.dtype.code, v.dtype.bits, v.dtype.lanes);
          d["shape"] = nb::tuple(shape);
          d["strides"] = v.strides ? nb::object(nb::tuple(strides)) : nb::none();
          return d;
        }, nb::arg("obj"));
}

}  // namespace nanocuda::py
