// _testing hook of NVML: forget the loaded table, so a test can point $NANOCUDA_LIBNVML elsewhere.
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "nanocuda/nvml/nvml_api.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_nvml_hooks(nb::module_& parent) {
  testing_module(parent).def("nvml_reset", &nvml::reset_for_testing,
                             "Forgets the NVML table so the next call loads $NANOCUDA_LIBNVML again.");
}

}  // namespace nanocuda::py
