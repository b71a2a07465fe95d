// Module-level facts: versions, the driver's location, and errors recorded in destructors.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>

#include "bindings.h"
#include "core/py_size.h"
#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/driver/driver_info.h"
#include "nanocuda/driver/driver_version.h"
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
  m.def("driver_library", &driver_library, "Path of the libcuda nanocuda loaded.");
  internal_module(m).attr("OLDEST_DRIVER_VERSION") = detail::kOldestDriverVersion;
  internal_module(m).def("nvrtc_driver_mismatch", &detail::nvrtc_driver_mismatch, nb::arg("nvrtc"),
                         nb::arg("driver"),
                         "'' when code from NVRTC `nvrtc` loads on driver `driver`, else why not.");
  m.def("take_deferred_errors", &take_deferred_errors,
        "Messages of errors recorded in destructors and not yet reported; clears them.");
  // A CUresult is an int (cuda.core's CUresult enums are ints too); a str or float is a
  // TypeError naming the call, not nanobind's signature list.
  m.def("result_name", [](nb::handle code) {
          return result_name(static_cast<CUresult>(int_arg(code, "result_name", "code (a CUresult)", INT32_MIN, INT32_MAX)));
        }, nb::arg("code").none(), "The name of a CUresult, e.g. 'CUDA_ERROR_INVALID_VALUE'.");
  m.def("result_description",
        [](nb::handle code) {
          return result_description(static_cast<CUresult>(int_arg(code, "result_description", "code (a CUresult)", INT32_MIN, INT32_MAX)));
        }, nb::arg("code").none(),
        "The driver's description of a CUresult, e.g. 'invalid argument'.");
}

}  // namespace nanocuda::py
