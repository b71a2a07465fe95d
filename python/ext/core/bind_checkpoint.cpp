// `_nanocuda._internal.checkpoint`: CUDA checkpoint/restore calls (glue for nanocuda.checkpoint.Process).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "nanocuda/core/checkpoint.h"

namespace nb = nanobind;

namespace nanocuda::py {

void bind_checkpoint(nb::module_& m) {
  namespace ck = nanocuda::checkpoint;
  nb::module_ c = internal_module(m).def_submodule("checkpoint", "CUDA checkpoint/restore; use nanocuda.checkpoint.");
  c.def("require_support", &ck::require_support);
  c.def("state", [](int pid) { return std::string(ck::state_name(ck::state(pid))); });
  c.def("restore_thread_id", &ck::restore_thread_id);
  c.def("lock", &ck::lock);
  c.def("checkpoint", &ck::checkpoint);
  c.def("unlock", &ck::unlock);
  c.def("restore", [](int pid, const std::vector<std::pair<std::string, std::string>>& mapping) {
    std::vector<std::pair<ck::Uuid, ck::Uuid>> pairs;
    for (const auto& [from, to] : mapping) pairs.emplace_back(ck::parse_uuid(from), ck::parse_uuid(to));
    ck::restore(pid, pairs);
  });
}

}  // namespace nanocuda::py
