// Python launch API: LaunchConfig, the general launch(), and the bound Launcher whose call
// is a raw vectorcall (no argument tuple, no dispatch) over the C++ Launcher.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <structmember.h>  // PyMemberDef (T_PYSSIZET, READONLY) on Python < 3.12

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "bindings.h"
#include "interop/interop.h"
#include "core/py_size.h"
#include "launch/launch_config_args.h"
#include "launch/py_graph.h"
#include "nanocuda/launch/host_launch.h"
#include "launch/launch_state.h"
#include "fastpath/fastcall.h"
#include "tma/py_tensor_map.h"

namespace nb = nanobind;

// The packing lambdas are inlined into the Launcher's pipeline (a call each, otherwise).
#define NANOCUDA_INLINE __attribute__((always_inline))

namespace nanocuda::py {

namespace {

nb::tuple from_dim3(const Dim3& d) { return nb::make_tuple(d.x, d.y, d.z); }

PyTypeObject* g_stream_type = nullptr;
PyTypeObject* g_config_type = nullptr;
PyTypeObject* g_kernel_type = nullptr;

// --- the general launch(stream, config, kernel, *args) -----------------------------------

// Per-position type decisions for the general path (the GIL serializes its use).
ArgSlot g_general_slots[ParamPacker::kMaxParamBytes / 4];

// launch()'s stream when it is not a nanocuda Stream: adopted (a deprecation warning for
// protocol-only objects, as cuda.core). Out of line: the plain-Stream call stays short.
[[gnu::noinline]] StreamRef foreign_launch_stream(PyObject* obj) {
  warn_foreign_stream(obj);
  return to_stream(obj, "launch");
}

NANOCUDA_FASTCALL_BODY PyObject* launch_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3)
    throw nb::type_error("launch(stream, config, kernel, *args): needs at least 3 arguments");
  // A nanocuda Stream's view is read in place (no shared_ptr copy); others are adopted.
  StreamRef stream = Py_TYPE(args[0]) == g_stream_type ? nb::inst_ptr<PyStream>(args[0])->ref("launch")
                                                       : foreign_launch_stream(args[0]);
  if (!PyObject_TypeCheck(args[1], g_config_type))
    throw nb::type_error(("launch: config must be a nanocuda.LaunchConfig, got " +
                          std::string(Py_TYPE(args[1])->tp_name)).c_str());
  if (!PyObject_TypeCheck(args[2], g_kernel_type))
    throw nb::type_error(("launch: kernel must be a nanocuda.Kernel, got " +
                          std::string(Py_TYPE(args[2])->tp_name)).c_str());
  const LaunchConfig& config = *nb::inst_ptr<LaunchConfig>(args[1]);
  const Kernel& kernel = *nb::inst_ptr<Kernel>(args[2]);
  const int device = stream.device().ordinal();
  Launcher::launch_once(stream, config, kernel, [&](ParamPacker& packer) NANOCUDA_INLINE {
    pack_args(packer, args + 3, static_cast<std::size_t>(nargs - 3), device, g_general_slots);
  });
  Py_RETURN_NONE;
}

PyMethodDef g_launch_def = fastcall_method<launch_fastcall>(
    "launch",
    "launch(stream, config, kernel, *args)\n--\n\nLaunch `kernel` with `config` on `stream`. "
    "Arguments are checked against the kernel's real parameter layout (count and every "
    "size). For hot loops, bind once with kernel.bind(config, stream) and call the Launcher.\n\n"
    "Example::\n\n"
    "    kernel = nanocuda.compile(src).get_kernel(\"saxpy\")\n"
    "    config = nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256)\n"
    "    nanocuda.launch(stream, config, kernel, 2.0, x, y, out, n)\n");

// --- the bound Launcher: a raw CPython type whose call is a vectorcall --------------------

struct LauncherObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* kernel_obj;  // keeps the Kernel (and its Library) alive
  LaunchState* state;
};

PyObject* launcher_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                              PyObject* kwnames) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  std::size_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames) [[unlikely]] {
    // The only keyword is stream=, for launching a bound kernel on another stream.
    if (PyTuple_GET_SIZE(kwnames) != 1 ||
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "stream") != 0)
      throw nb::type_error("Launcher call: the only keyword argument is stream=");
    StreamRef s = stream_arg(args[n], l->state->bound.stream(), "Launcher");
    l->state->call(args, n, s, s.device_ordinal());
  } else {
    l->state->call(args, n, l->state->bound.stream(), l->state->bound_device);
  }
  Py_RETURN_NONE;
}

void launcher_dealloc(PyObject* self) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  PyTypeObject* type = Py_TYPE(self);
  delete l->state;
  Py_XDECREF(l->kernel_obj);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* launcher_repr(PyObject* self) {
  auto* l = reinterpret_cast<LauncherObject*>(self);
  const Launcher& b = l->state->bound;
  std::string text = "<nanocuda.Launcher " + b.kernel().name() + " " + b.config().describe() +
                     " on " + b.stream().describe() + ">";
  return PyUnicode_FromString(text.c_str());
}

PyMemberDef g_launcher_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot g_launcher_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(launcher_dealloc)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_repr, reinterpret_cast<void*>(launcher_repr)},
    {Py_tp_members, g_launcher_members},
    {Py_tp_doc, const_cast<char*>(
        "A kernel bound to a launch config and a stream; call it with only the kernel's "
        "arguments (and optionally stream=). The fastest way to launch from Python.")},
    {0, nullptr}};

PyType_Spec g_launcher_spec = {
    "nanocuda.Launcher", sizeof(LauncherObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_IMMUTABLETYPE, g_launcher_slots};

PyTypeObject* g_launcher_type = nullptr;

nb::object make_launcher(nb::handle kernel_obj, const LaunchConfig& config, nb::handle stream,
                         nb::handle tensor_maps) {
  const Kernel& kernel = nb::cast<const Kernel&>(kernel_obj);
  StreamRef s = stream.is_none() ? StreamRef::default_for(Device()) : to_stream(stream, "Kernel.bind");
  auto state = std::make_unique<LaunchState>(kernel, config, s);
  if (!tensor_maps.is_none()) {
    const ParamLayout& layout = kernel.param_layout();
    state->bound_maps.resize(layout.count());
    if (!nb::isinstance<nb::dict>(tensor_maps))
      throw nb::type_error((std::string("Kernel.bind: tensor_maps must be a dict {parameter index: TensorMap}, got ") +
                            Py_TYPE(tensor_maps.ptr())->tp_name).c_str());
    for (auto [key, value] : nb::borrow<nb::dict>(tensor_maps)) {
      auto i = static_cast<std::size_t>(int_arg(key, "Kernel.bind", "a tensor_maps key (a parameter index)", 0, INT_MAX));
      std::string at = "Kernel.bind: tensor_maps[" + std::to_string(i) + "]";
      if (i >= layout.count())
        throw nb::value_error((at + ": kernel '" + kernel.name() + "' has only " +
                               std::to_string(layout.count()) + " parameters").c_str());
      if (layout.params[i].size != 128)
        throw nb::value_error((at + ": parameter " + std::to_string(i) + " is " +
                               std::to_string(layout.params[i].size) +
                               " bytes, not a 128-byte CUtensorMap").c_str());
      const PyTensorMap* tm = as_tensor_map(value.ptr());
      if (!tm || tm->kind != PyTensorMap::Kind::Tiled)
        throw nb::type_error((at + ": expected a tiled nanocuda.TensorMap as the template").c_str());
      state->bound_maps[i] = std::make_unique<BoundTensorMap>(tm->tiled, tm->map());
      state->slots[i].bound = state->bound_maps[i].get();
    }
  }
  auto* obj = PyObject_New(LauncherObject, g_launcher_type);
  if (!obj) throw nb::python_error();
  obj->vectorcall = guarded<launcher_vectorcall>;
  obj->kernel_obj = nb::borrow(kernel_obj).release().ptr();
  obj->state = state.release();
  return nb::steal(reinterpret_cast<PyObject*>(obj));
}

}  // namespace

LaunchState& launcher_state(nb::handle launcher) {
  if (Py_TYPE(launcher.ptr()) != g_launcher_type) throw nb::type_error("expected a nanocuda.Launcher");
  return *reinterpret_cast<LauncherObject*>(launcher.ptr())->state;
}

StreamRef stream_arg(PyObject* obj, StreamRef fallback, const char* where) {
  if (obj == Py_None) return fallback;
  if (Py_TYPE(obj) == g_stream_type) return nb::inst_ptr<PyStream>(obj)->ref(where);
  return to_stream(nb::handle(obj), where);
}

LaunchState::LaunchState(const Kernel& k, const LaunchConfig& c, StreamRef s)
    : bound(k, c, s),
      bound_device(bound.stream().device_ordinal()),
      slots(k.param_layout().count() + 1) {}

void LaunchState::call(PyObject* const* args, std::size_t n, StreamRef on, int device) {
  if (!bound.try_pack_and_launch(on, [&](ParamPacker& packer) NANOCUDA_INLINE {
        pack_args(packer, args, n, device, slots.data());
      })) [[unlikely]]
    call_nested(args, n, on);
}

void LaunchState::call_nested(PyObject* const* args, std::size_t n, StreamRef on) {
  // A nested call: the shared slots and bound maps may be mid-update, so it packs with
  // copies (each slot's checks and bound-map geometry, not its cached kind).
  std::vector<ArgSlot> local(slots.size());
  std::vector<BoundTensorMap> copies;
  copies.reserve(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    local[i].checks = slots[i].checks;
    if (slots[i].bound) local[i].bound = &copies.emplace_back(*slots[i].bound);
  }
  bound.pack_and_launch_unshared(on, [&](ParamPacker& packer) {
    pack_args(packer, args, n, on.device_ordinal(), local.data());
  });
}

void bind_launch(nb::module_& m) {
  nb::class_<LaunchConfig>(m, "LaunchConfig", "Grid, block, dynamic shared memory, clusters, "
                                               "cooperative launch and programmatic dependent launch.",
                                nb::is_weak_referenceable())
      .def("__init__",
           [](LaunchConfig* self, nb::handle grid, nb::handle block, nb::handle shared_mem,
              nb::handle cluster, nb::handle cooperative, nb::handle pdl, nb::handle shmem_size,
              nb::handle cooperative_launch, nb::handle is_cooperative,
              nb::handle programmatic_stream_serialization) {
             // cuda.core's names (shmem_size; is_cooperative, and cooperative_launch before
             // 1.0; programmatic_stream_serialization) are aliases of nanocuda's.
             NamedArg shmem = one_named({{"shared_mem", shared_mem}, {"shmem_size", shmem_size}});
             NamedArg coop = one_named({{"cooperative", cooperative}, {"is_cooperative", is_cooperative},
                                        {"cooperative_launch", cooperative_launch}});
             NamedArg serial = one_named({{"pdl", pdl},
                                          {"programmatic_stream_serialization", programmatic_stream_serialization}});
             if (grid.is_none() || block.is_none())
               throw nb::type_error("LaunchConfig: grid= and block= are required");
             LaunchConfig c;
             c.grid = to_dim3(grid, "grid");
             c.block = to_dim3(block, "block");
             c.shared_mem = shared_mem_of(shmem.value, shmem.name);
             if (!cluster.is_none()) c.cluster = to_dim3(cluster, "cluster");
             c.cooperative = flag_of(coop.value, coop.name);
             c.programmatic_dependent_launch = flag_of(serial.value, serial.name);
             c.validate();
             new (self) LaunchConfig(c);
           },
           nb::kw_only(), nb::arg("grid") = nb::none(), nb::arg("block") = nb::none(),
           nb::arg("shared_mem") = nb::none(), nb::arg("cluster") = nb::none(),
           nb::arg("cooperative") = nb::none(), nb::arg("pdl") = nb::none(),
           nb::arg("shmem_size") = nb::none(), nb::arg("cooperative_launch") = nb::none(),
           nb::arg("is_cooperative") = nb::none(), nb::arg("programmatic_stream_serialization") = nb::none(),
           "grid and block: an int or a tuple of 1-3 ints. shared_mem (cuda.core: shmem_size) "
           "bytes of dynamic shared memory; cluster: thread-block cluster shape, and then grid counts "
           "clusters, as in cuda.core (grid=4, cluster=2 runs 8 blocks); cooperative "
           "(cuda.core: is_cooperative); pdl: programmatic dependent launch (cuda.core: "
           "programmatic_stream_serialization).")
      // Reached only when the keywords above do not fit (valid calls take the overload above):
      // nanobind's own message would list C++ signatures, so name the rule in Python terms.
      .def("__init__",
           [](LaunchConfig*, nb::args args, nb::kwargs kwargs) {
             if (args.size() != 0)
               throw nb::type_error("LaunchConfig: takes keyword arguments only, e.g. LaunchConfig(grid=4, block=128)");
             std::string unknown;
             static constexpr std::string_view kKnown[] = {
                 "grid", "block", "shared_mem", "cluster", "cooperative", "pdl", "shmem_size",
                 "cooperative_launch", "is_cooperative", "programmatic_stream_serialization"};
             for (auto [key, value] : kwargs) {
               std::string k = nb::cast<std::string>(key);
               if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown))
                 unknown += (unknown.empty() ? "'" : ", '") + k + "'";
             }
             throw nb::type_error(("LaunchConfig: unknown argument " + unknown +
                                   "; it takes grid, block, shared_mem (shmem_size), cluster, cooperative "
                                   "(is_cooperative), pdl (programmatic_stream_serialization); a stream goes to "
                                   "launch(stream, config, kernel, *args)").c_str());
           })
      .def_prop_ro("grid", [](const LaunchConfig& c) { return from_dim3(c.grid); },
                   "Blocks per grid, (x, y, z); clusters per grid when cluster is set.")
      .def_prop_ro("block", [](const LaunchConfig& c) { return from_dim3(c.block); }, "Threads per block, (x, y, z).")
      .def_prop_ro("shared_mem", [](const LaunchConfig& c) { return c.shared_mem; }, "Dynamic shared memory per block, bytes.")
      .def_prop_ro("shmem_size", [](const LaunchConfig& c) { return c.shared_mem; }, "cuda.core's name for shared_mem.")
      .def_prop_ro("cooperative_launch", [](const LaunchConfig& c) { return c.cooperative; },
                   "Older cuda.core name for cooperative.")
      .def_prop_ro("is_cooperative", [](const LaunchConfig& c) { return c.cooperative; },
                   "cuda.core 1.2's name for cooperative.")
      .def_prop_ro("programmatic_stream_serialization",
                   [](const LaunchConfig& c) { return c.programmatic_dependent_launch; },
                   "cuda.core's name for pdl (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).")
      .def_prop_ro("cluster", [](const LaunchConfig& c) -> nb::object {
        return c.has_cluster() ? nb::object(from_dim3(c.cluster)) : nb::none();
      }, "Thread-block cluster shape (x, y, z), or None.")
      .def_prop_ro("cooperative", [](const LaunchConfig& c) { return c.cooperative; }, "True for a cooperative launch (grid-wide sync).")
      .def_prop_ro("pdl", [](const LaunchConfig& c) { return c.programmatic_dependent_launch; },
                   "True for programmatic dependent launch (overlaps the previous kernel's tail).")
      .def("__repr__", [](const LaunchConfig& c) { return "LaunchConfig" + c.describe(); });

  internal_module(m).def("host_launch",
         [](nb::handle stream, nb::handle fn, const char* call) {
           StreamRef s = to_stream(stream, call);
           if (nb::isinstance<nb::tuple>(fn)) {  // (CUhostFn address, data address, what to keep): a ctypes function
             auto parts = nb::cast<nb::tuple>(fn);
             PyObject* keep = parts[2].ptr();
             Py_INCREF(keep);
             std::shared_ptr<void> held(keep, [](void* p) {  // released on the driver's thread
               if (!Py_IsInitialized()) return;
               PyGILState_STATE gil = PyGILState_Ensure();
               Py_DECREF(static_cast<PyObject*>(p));
               PyGILState_Release(gil);
             });
             host_launch(s, reinterpret_cast<CUhostFn>(nb::cast<std::uintptr_t>(parts[0])),
                         reinterpret_cast<void*>(nb::cast<std::uintptr_t>(parts[1])), std::move(held), call);
             return;
           }
           CUhostFn run = nullptr;
           std::shared_ptr<void> cb = make_py_callback(fn, &run);
           host_launch(s, run, cb.get(), cb, call);
         },
         nb::arg("stream"), nb::arg("fn"), nb::arg("call"),
         "cuLaunchHostFunc once after the stream's earlier work: fn() with the GIL, or a ctypes "
         "function's (address, data, keep) from nanocuda.graph._host_fn_parts.");
  g_stream_type = reinterpret_cast<PyTypeObject*>(nb::type<PyStream>().ptr());
  g_config_type = reinterpret_cast<PyTypeObject*>(nb::type<LaunchConfig>().ptr());
  g_kernel_type = reinterpret_cast<PyTypeObject*>(nb::type<Kernel>().ptr());
  if (!g_kernel_type) throw std::runtime_error("bind_launch: Kernel must be bound first");
  register_tensor_map_type(g_tensor_map_type, [](PyObject* obj) -> const void* {
    return reinterpret_cast<PyTensorMap*>(obj)->bytes;
  });

  add_function(m, &g_launch_def);

  g_launcher_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&g_launcher_spec));
  if (!g_launcher_type) throw nb::python_error();
  m.attr("Launcher") = nb::borrow(reinterpret_cast<PyObject*>(g_launcher_type));

  nb::handle kernel_type(reinterpret_cast<PyObject*>(g_kernel_type));
  kernel_type.attr("bind") = nb::cpp_function(
      [](nb::handle self, const LaunchConfig& config, nb::handle stream, nb::handle tensor_maps) {
        return make_launcher(self, config, stream, tensor_maps);
      },
      nb::is_method(), nb::arg("config"), nb::kw_only(), nb::arg("stream") = nb::none(),
      nb::arg("tensor_maps") = nb::none(),
      "Bind this kernel to `config` and `stream` (default: the legacy stream of the current device); "
      "returns a Launcher to call with only the kernel's arguments.\n\n"
      "tensor_maps={index: TensorMap} binds CUtensorMap parameters to templates (box, swizzle, "
      "...): the Launcher then takes tensors there, and re-encodes a descriptor only when the "
      "tensor's geometry changes (an address swap when only its pointer does).");

  // torch ops (python/nanocuda/torch_ops) move their per-call dtype/contiguity checks here.
  internal_module(m).def("pack_params", &pack_with_layout, nb::arg("layout"), nb::arg("name"),
                         nb::arg("args"),
                         "The bytes a launch packs for `args` against layout [(offset, size), ...] and\n"
                         "kernel `name`, with the launch's checks; no device needed. For jax_ops.");
  internal_module(m).def("launcher_require", [](nb::handle launcher, std::size_t index,
                                                std::vector<std::uint32_t> dtypes, bool contiguous) {
          LaunchState& st = launcher_state(launcher);
          if (index >= st.bound.kernel().param_layout().count() || dtypes.size() > 4)
            throw nb::value_error("launcher_require: no such parameter, or more than 4 dtypes");
          SlotChecks& c = st.slots[index].checks;
          c = SlotChecks{};
          for (std::size_t k = 0; k < dtypes.size(); ++k) c.dtypes[k] = dtypes[k];
          c.contiguous = contiguous;
          c.any = contiguous || !dtypes.empty();
        }, nb::arg("launcher"), nb::arg("index"), nb::arg("dtypes"), nb::arg("contiguous"),
        "Makes `launcher` check the tensor at parameter `index`: DLPack dtype codes (code | bits << 8 |\n"
        "lanes << 16; any may match; empty: any dtype) and contiguity. For torch_ops.");
}

}  // namespace nanocuda::py
