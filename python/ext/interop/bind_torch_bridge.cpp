// Installing the optional torch bridge (nanocuda.torch_bridge): a reader compiled against the
// installed torch replaces torch's DLPack exchange function for exact tensor types.
#include <nanobind/nanobind.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "interop/dlpack_exchange.h"
#include "interop/torch_abi.h"
#include "nanocuda/driver/error.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

PyTypeObject* as_type(nb::handle type, const char* call) {
  if (!PyType_Check(type.ptr())) throw TypeError(std::string(call) + ": expected a type");
  return reinterpret_cast<PyTypeObject*>(type.ptr());
}

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
  // The stable-C-ABI reader (nanocuda.torch_bridge picks the reader; see torch_abi.h).
  m.def("torch_abi_prepare",
        [](nb::handle type, const std::vector<std::string>& libraries, nb::list probes) {
          PyTypeObject* t = as_type(type, "torch_abi_prepare");
          for (nb::handle p : probes)
            if (!PyTuple_Check(p.ptr()) || PyTuple_GET_SIZE(p.ptr()) != 2 ||
                !PyObject_TypeCheck(PyTuple_GET_ITEM(p.ptr(), 0), t))
              throw TypeError(std::string("torch_abi_prepare: each probe must be a (") +
                              t->tp_name + ", _cdata) pair");
          return torch_abi::prepare(libraries, probes.ptr(), producer_reader(t));
        },
        nb::arg("type"), nb::arg("libraries"), nb::arg("probes"),
        "Readies the torch C ABI reader once; \"\" when ready, else why it is not used.");
  m.def("torch_abi_install", [](nb::handle type) {
          PyTypeObject* t = as_type(type, "torch_abi_install");
          if (!torch_abi::ready())
            throw ValueError("torch_abi_install: the C ABI reader is not ready (torch_abi_prepare)");
          if (!producer_reader(t))
            throw ValueError(std::string("torch_abi_install: ") + t->tp_name +
                             " has no DLPack exchange API for the reader to fall back on");
          override_reader(t, &torch_abi::read);
        }, nb::arg("type"), "Makes the torch C ABI reader `type`'s tensor reader.");
  m.def("torch_abi_ready", &torch_abi::ready, "Whether the torch C ABI reader passed its check.");
  m.def("tensor_reader_kind", [](nb::handle type) -> const char* {
          TensorViewReader r = replacement_reader(as_type(type, "tensor_reader_kind"));
          return !r ? "exchange" : r == &torch_abi::read ? "abi" : "bridge";
        }, nb::arg("type"),
        "Which reader `type` gets from now on: 'exchange', 'abi' (torch C ABI) or 'bridge'.");
  m.def("tensor_reader_is_replaced", [](nb::handle type) {
          return PyType_Check(type.ptr()) &&
                 reader_overridden(reinterpret_cast<PyTypeObject*>(type.ptr()));
        }, nb::arg("type"),
        "Whether `type`'s tensor reader is the torch bridge's (`nanocuda info`).");
}

}  // namespace nanocuda::py
