// Installing the optional torch bridge (nanocuda.torch_bridge): a reader compiled against the
// installed torch replaces torch's DLPack exchange function for exact tensor types.
#include <nanobind/nanobind.h>

#include <string>

#include "bindings.h"
#include "interop/dlpack_exchange.h"
#include "nanocuda/driver/error.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

void* capsule_pointer(nb::handle capsule, const char* name) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (!p) {
    PyErr_Clear();
    throw TypeError(std::string("set_tensor_reader: expected a capsule named '") + name + "'");
  }
  return p;
}

}  // namespace

void bind_torch_bridge(nb::module_& parent) {
  nb::module_ m = internal_module(parent);
  m.def("set_tensor_reader",
        [](nb::handle type, nb::handle reader, nb::handle fallback_slot) {
          if (!PyType_Check(type.ptr())) throw TypeError("set_tensor_reader: expected a type");
          auto* t = reinterpret_cast<PyTypeObject*>(type.ptr());
          if (reader.is_none()) {
            override_reader(t, nullptr);
            return;
          }
          TensorViewReader own = producer_reader(t);
          if (!own)
            throw ValueError(std::string("set_tensor_reader: ") + t->tp_name +
                             " has no DLPack exchange API for the reader to fall back on");
          // The replacement hands every case it does not handle to the producer's function.
          *static_cast<TensorViewReader*>(capsule_pointer(fallback_slot,
                                                          "nanocuda.torch_reader_fallback")) = own;
          override_reader(t, reinterpret_cast<TensorViewReader>(
                                 capsule_pointer(reader, "nanocuda.torch_reader")));
        },
        nb::arg("type"), nb::arg("reader").none(), nb::arg("fallback_slot").none() = nb::none(),
        "Replaces `type`'s tensor reader (torch bridge); reader=None restores the producer's.");
  m.def("set_first_sight_hook", [](nb::handle hook) { set_first_sight_hook(hook.ptr()); },
        nb::arg("hook").none(),
        "hook(type) runs the first time a tensor reader is looked up for a type (torch bridge).");
  m.def("tensor_reader_is_replaced", [](nb::handle type) {
          return PyType_Check(type.ptr()) &&
                 reader_overridden(reinterpret_cast<PyTypeObject*>(type.ptr()));
        }, nb::arg("type"),
        "Whether `type`'s tensor reader is the torch bridge's (`nanocuda info`).");
}

}  // namespace nanocuda::py
