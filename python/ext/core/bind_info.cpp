// Module-level facts: versions, the driver's location, and errors recorded in destructors.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "interop/dlpack_exchange.h"
#include "interop/interop.h"

#include <chrono>
#include "interop/interop.h"
#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/core/device.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/version.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_info(nb::module_& m) {
  m.attr("__version__") = kVersion;
  m.attr("BUILT_CUDA_VERSION") = kBuiltCudaVersion;
  m.def("driver_version", &Device::driver_version,
        "The installed driver's CUDA version (major*1000 + minor*10); loads the driver.");
  m.def("driver_library", [] {
    detail::load_driver();
    return std::string(detail::driver_library_path());
  }, "Path of the libcuda nanocuda loaded.");
  m.def("take_deferred_errors", &detail::take_deferred_errors,
        "Messages of errors recorded in destructors and not yet reported; clears them.");
  m.def("result_name", [](int code) { return result_name(static_cast<CUresult>(code)); },
        nb::arg("code"), "The name of a CUresult, e.g. 'CUDA_ERROR_INVALID_VALUE'.");
  m.def("result_description",
        [](int code) { return result_description(static_cast<CUresult>(code)); }, nb::arg("code"),
        "The driver's description of a CUresult, e.g. 'invalid argument'.");

  // Introspection of nanocuda's reading of foreign objects, for tests and debugging.
  m.def("_device_pointer", [](nb::handle obj, int device) {
    return device_pointer(obj, device, "_device_pointer");
  }, nb::arg("obj"), nb::arg("device") = -1);
  m.def("_describe_array", [](nb::handle obj) {
    ArrayView v = describe_array(obj, "_describe_array");
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
  m.def("_exchange_read_ns", [](nb::handle obj, int count) {
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
  m.def("_parse_dtype", [](nb::handle obj) { return parse_dtype(obj).name; }, nb::arg("dtype"));
}

}  // namespace nanocuda::py
