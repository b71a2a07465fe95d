// _testing hooks of the launch path: packing against a hand-made layout, and a Launcher's
// bound-map counters.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "launch/arg_pack.h"
#include "launch/launch_state.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_launch_hooks(nb::module_& parent) {
  nb::module_ m = testing_module(parent);
  m.def("launcher_map_stats", [](nb::handle launcher) {
          LaunchState& st = launcher_state(launcher);
          nb::dict out;
          for (std::size_t i = 0; i < st.bound_maps.size(); ++i)
            if (st.bound_maps[i])
              out[nb::int_(i)] = nb::make_tuple(st.bound_maps[i]->encodes(),
                                                st.bound_maps[i]->address_swaps());
          return out;
        }, nb::arg("launcher"),
        "{parameter: (re-encodes, address swaps)} of a Launcher's bound tensor maps (tests).");
  m.def("pack_args", &pack_with_layout, nb::arg("layout"), nb::arg("name"), nb::arg("args"),
        "The bytes the launch path packs for `args` against layout [(offset, size), ...].");
}

}  // namespace nanocuda::py
