// Python launch API: LaunchConfig, the general launch(), and the bound Launcher whose call
// is a raw vectorcall (no argument tuple, no dispatch), plus the same-process C++ loops the
// benchmarks compare against.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <structmember.h>  // PyMemberDef (T_PYSSIZET, READONLY) on Python < 3.12

#include <chrono>
#include <optional>
#include <string>

#include "bindings.h"
#include "interop/interop.h"
#include "launch/launch_state.h"
#include "nanocuda/driver/check.h"
#include "tma/py_tensor_map.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

Dim3 to_dim3(nb::handle obj, const char* what) {
  if (PyLong_Check(obj.ptr())) return {nb::cast<std::uint32_t>(obj), 1, 1};
  nb::tuple t = nb::tuple(nb::borrow(obj));
  if (t.size() < 1 || t.size() > 3)
    throw nb::value_error((std::string("LaunchConfig: ") + what + " must be an int or a tuple of 1-3 ints").c_str());
  Dim3 d;
  d.x = nb::cast<std::uint32_t>(t[0]);
  if (t.size() > 1) d.y = nb::cast<std::uint32_t>(t[1]);
  if (t.size() > 2) d.z = nb::cast<std::uint32_t>(t[2]);
  return d;
}

nb::tuple from_dim3(const Dim3& d) { return nb::make_tuple(d.x, d.y, d.z); }

PyTypeObject* g_stream_type = nullptr;
PyTypeObject* g_config_type = nullptr;
PyTypeObject* g_kernel_type = nullptr;

// --- the general launch(stream, config, kernel, *args) -----------------------------------

// Per-position type decisions for the general path (the GIL serializes its use).
ArgSlot g_general_slots[ParamPacker::kMaxParamBytes / 4];

PyObject* launch_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs < 3)
      throw nb::type_error("launch(stream, config, kernel, *args): needs at least 3 arguments");
    // A nanocuda Stream is used in place (no shared_ptr copy); others are adopted.
    std::optional<Stream> adopted;
    if (Py_TYPE(args[0]) != g_stream_type) adopted.emplace(to_stream(args[0], "launch"));
    const Stream& stream = adopted ? *adopted : *nb::inst_ptr<Stream>(args[0]);
    if (!PyObject_TypeCheck(args[1], g_config_type))
      throw nb::type_error(("launch: config must be a nanocuda.LaunchConfig, got " +
                            std::string(Py_TYPE(args[1])->tp_name)).c_str());
    if (!PyObject_TypeCheck(args[2], g_kernel_type))
      throw nb::type_error(("launch: kernel must be a nanocuda.Kernel, got " +
                            std::string(Py_TYPE(args[2])->tp_name)).c_str());
    const LaunchConfig& config = *nb::inst_ptr<LaunchConfig>(args[1]);
    const Kernel& kernel = *nb::inst_ptr<Kernel>(args[2]);
    const ParamLayout& layout = kernel.param_layout();
    alignas(16) unsigned char storage[4096];
    void* pointers[512];
    std::unique_ptr<unsigned char[]> big;
    std::vector<void*> big_pointers;
    unsigned char* buf = storage;
    void** ptrs = pointers;
    if (layout.total_size() > sizeof storage || layout.count() > 512) [[unlikely]] {
      big.reset(new unsigned char[layout.total_size() + 16]);
      buf = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(big.get()) + 15) & ~std::uintptr_t{15});
      big_pointers.resize(layout.count());
      ptrs = big_pointers.data();
    }
    ParamPacker packer(layout, kernel.name(), buf, ptrs);
    pack_args(packer, args + 3, static_cast<std::size_t>(nargs - 3), stream.device().ordinal(),
              g_general_slots);
    CUcontext ctx = stream.context().handle();
    ensure_current(ctx);
    LaunchTarget target{kernel.function(stream.context()), kernel.name(), &layout, nullptr};
    launch_packed(stream, config, target, ptrs);
    Py_RETURN_NONE;
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
}

PyMethodDef g_launch_def = {
    "launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(launch_fastcall)),
    METH_FASTCALL,
    "launch(stream, config, kernel, *args)\n--\n\nLaunch `kernel` with `config` on `stream`. "
    "Arguments are checked against the kernel's real parameter layout (count and every "
    "size). For hot loops, bind once with kernel.bind(config, stream) and call the Launcher.\n\n"
    "Example::\n\n"
    "    kernel = nanocuda.compile(src).get_kernel(\"saxpy\")\n"
    "    config = nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256)\n"
    "    nanocuda.launch(stream, config, kernel, 2.0, x, y, out, n)\n"};

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
  try {
    if (kwnames) [[unlikely]] {
      // The only keyword is stream=, for launching a bound kernel on another stream.
      if (PyTuple_GET_SIZE(kwnames) != 1 ||
          PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "stream") != 0)
        throw nb::type_error("Launcher call: the only keyword argument is stream=");
      Stream s = stream_arg(args[n], l->state->stream, "Launcher");
      l->state->call(args, n, s);
    } else {
      l->state->call(args, n, l->state->stream);
    }
    Py_RETURN_NONE;
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
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
  std::string text = "<nanocuda.Launcher " + l->state->kernel.name() + " " +
                     l->state->config.describe() + " on " + l->state->stream.describe() + ">";
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

LaunchState& state_of(nb::handle launcher) {
  if (Py_TYPE(launcher.ptr()) != g_launcher_type) throw nb::type_error("expected a nanocuda.Launcher");
  return *reinterpret_cast<LauncherObject*>(launcher.ptr())->state;
}

nb::object make_launcher(nb::handle kernel_obj, const LaunchConfig& config, nb::handle stream,
                         nb::handle tensor_maps) {
  const Kernel& kernel = nb::cast<const Kernel&>(kernel_obj);
  Stream s = stream.is_none() ? Stream::legacy(Device(0)) : to_stream(stream, "Kernel.bind");
  auto state = std::make_unique<LaunchState>(kernel, config, s);
  if (!tensor_maps.is_none()) {
    const ParamLayout& layout = kernel.param_layout();
    state->bound_maps.resize(layout.count());
    for (auto [key, value] : nb::cast<nb::dict>(tensor_maps)) {
      std::size_t i = nb::cast<std::size_t>(key);
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
  obj->vectorcall = launcher_vectorcall;
  obj->kernel_obj = nb::borrow(kernel_obj).release().ptr();
  obj->state = state.release();
  return nb::steal(reinterpret_cast<PyObject*>(obj));
}

// --- the native C++ loops the benchmarks compare against --------------------------------

// `count` cuLaunchKernel calls with the launcher's packed parameters; returns nanoseconds.
std::int64_t cpp_launch_burst(nb::handle launcher, int count) {
  LaunchState& st = state_of(launcher);
  const auto& api = detail::driver();
  ensure_current(st.context);
  const LaunchConfig& c = st.config;
  CUstream h = st.stream.handle();
  void** params = st.pointers.data();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i)
    api.cuLaunchKernel(st.target.function, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y,
                       c.block.z, c.shared_mem, h, params, nullptr);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

// The seed-001 workload in native C++: `count` iterations of 3 cuTensorMapEncodeTiled calls
// (512x512 fp16, box 64x64, 128B swizzle, L2 128B), plus, when a launcher is given, a launch
// of its kernel with the 3 maps (the seed-000 shape done naively). Returns nanoseconds.
std::int64_t cpp_tma_burst(std::uint64_t a, std::uint64_t b, std::uint64_t c, int count,
                           nb::handle launcher) {
  const auto& api = detail::driver();
  LaunchState* st = launcher.is_none() ? nullptr : &state_of(launcher);
  if (st) ensure_current(st->context);
  const cuuint64_t dims[2] = {512, 512};
  const cuuint64_t strides[1] = {512 * 2};
  const cuuint32_t box[2] = {64, 64};
  const cuuint32_t elem[2] = {1, 1};
  const std::uint64_t ptrs[3] = {a, b, c};
  alignas(128) CUtensorMap maps[3];
  void* params[3] = {&maps[0], &maps[1], &maps[2]};
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    for (int m = 0; m < 3; ++m)
      api.cuTensorMapEncodeTiled(&maps[m], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                 reinterpret_cast<void*>(ptrs[m]), dims, strides, box, elem,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (st) {
      const LaunchConfig& cfg = st->config;
      api.cuLaunchKernel(st->target.function, cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x,
                         cfg.block.y, cfg.block.z, cfg.shared_mem, st->stream.handle(), params,
                         nullptr);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

}  // namespace

void ensure_current(CUcontext ctx) {
  const auto& api = detail::driver();
  CUcontext current = nullptr;
  api.cuCtxGetCurrent(&current);
  if (current != ctx) [[unlikely]]
    detail::check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "launch");
}

Stream stream_arg(PyObject* obj, const Stream& fallback, const char* where) {
  if (obj == Py_None) return fallback;
  if (Py_TYPE(obj) == g_stream_type) return *nb::inst_ptr<Stream>(obj);
  return to_stream(nb::handle(obj), where);
}

LaunchState::LaunchState(const Kernel& k, const LaunchConfig& c, const Stream& s)
    : kernel(k),
      config(c),
      stream(s),
      context(s.context().handle()),
      storage(static_cast<unsigned char*>(std::aligned_alloc(16, (k.param_layout().total_size() + 15) / 16 * 16 + 16))),
      pointers(k.param_layout().count() + 1),
      slots(k.param_layout().count() + 1),
      packer(k.param_layout(), kernel.name(), storage.get(), pointers.data()) {
  config.validate();
  target = LaunchTarget{kernel.function(s.context()), kernel.name(), &kernel.param_layout(),
                        &shared_mem_limit};
}

void LaunchState::call(PyObject* const* args, std::size_t n, const Stream& on) {
  if (busy_) [[unlikely]] return call_unshared(args, n, on);
  busy_ = true;
  struct Done {
    bool& busy;
    ~Done() { busy = false; }
  } done{busy_};
  pack_args(packer, args, n, on.device().ordinal(), slots.data());
  ensure_current(context);
  launch_packed(on, config, target, pointers.data());
}

void LaunchState::call_unshared(PyObject* const* args, std::size_t n, const Stream& on) {
  const ParamLayout& layout = kernel.param_layout();
  std::vector<unsigned char> buffer(layout.total_size() + 16);
  auto* aligned = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(buffer.data()) + 15) & ~std::uintptr_t{15});
  std::vector<void*> params(layout.count() + 1);
  std::vector<ArgSlot> local(slots.size());
  std::vector<BoundTensorMap> copies;  // the shared ones may be mid-update
  copies.reserve(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    local[i].checks = slots[i].checks;
    if (slots[i].bound) local[i].bound = &copies.emplace_back(*slots[i].bound);
  }
  ParamPacker p(layout, kernel.name(), aligned, params.data());
  pack_args(p, args, n, on.device().ordinal(), local.data());
  ensure_current(context);
  launch_packed(on, config, target, params.data());
}

void bind_launch(nb::module_& m) {
  nb::class_<LaunchConfig>(m, "LaunchConfig", "Grid, block, dynamic shared memory, clusters, "
                                               "cooperative launch and programmatic dependent launch.")
      .def("__init__",
           [](LaunchConfig* self, nb::handle grid, nb::handle block, std::uint32_t shared_mem,
              nb::handle cluster, bool cooperative, bool pdl) {
             LaunchConfig c;
             c.grid = to_dim3(grid, "grid");
             c.block = to_dim3(block, "block");
             c.shared_mem = shared_mem;
             if (!cluster.is_none()) c.cluster = to_dim3(cluster, "cluster");
             c.cooperative = cooperative;
             c.programmatic_dependent_launch = pdl;
             c.validate();
             new (self) LaunchConfig(c);
           },
           nb::kw_only(), nb::arg("grid"), nb::arg("block"), nb::arg("shared_mem") = 0,
           nb::arg("cluster") = nb::none(), nb::arg("cooperative") = false, nb::arg("pdl") = false)
      .def_prop_ro("grid", [](const LaunchConfig& c) { return from_dim3(c.grid); }, "Blocks per grid, (x, y, z).")
      .def_prop_ro("block", [](const LaunchConfig& c) { return from_dim3(c.block); }, "Threads per block, (x, y, z).")
      .def_prop_ro("shared_mem", [](const LaunchConfig& c) { return c.shared_mem; }, "Dynamic shared memory per block, bytes.")
      .def_prop_ro("cluster", [](const LaunchConfig& c) -> nb::object {
        return c.has_cluster() ? nb::object(from_dim3(c.cluster)) : nb::none();
      }, "Thread-block cluster shape (x, y, z), or None.")
      .def_prop_ro("cooperative", [](const LaunchConfig& c) { return c.cooperative; }, "True for a cooperative launch (grid-wide sync).")
      .def_prop_ro("pdl", [](const LaunchConfig& c) { return c.programmatic_dependent_launch; },
                   "True for programmatic dependent launch (overlaps the previous kernel's tail).")
      .def("__repr__", [](const LaunchConfig& c) { return "LaunchConfig" + c.describe(); });

  g_stream_type = reinterpret_cast<PyTypeObject*>(nb::type<Stream>().ptr());
  g_config_type = reinterpret_cast<PyTypeObject*>(nb::type<LaunchConfig>().ptr());
  g_kernel_type = reinterpret_cast<PyTypeObject*>(nb::type<Kernel>().ptr());
  if (!g_kernel_type) throw std::runtime_error("bind_launch: Kernel must be bound first");
  register_tensor_map_type(g_tensor_map_type, [](PyObject* obj) -> const void* {
    return reinterpret_cast<PyTensorMap*>(obj)->bytes;
  });

  PyObject* fn = PyCFunction_NewEx(&g_launch_def, nullptr, m.attr("__name__").ptr());
  m.attr("launch") = nb::steal(fn);

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
      "Bind this kernel to `config` and `stream` (default: the legacy stream of device 0); "
      "returns a Launcher to call with only the kernel's arguments.\n\n"
      "tensor_maps={index: TensorMap} binds CUtensorMap parameters to templates (box, swizzle, "
      "...): the Launcher then takes tensors there, and re-encodes a descriptor only when the "
      "tensor's geometry changes (an address swap when only its pointer does).");

  m.def("_cpp_launch_burst", &cpp_launch_burst, nb::arg("launcher"), nb::arg("count"),
        "Native C++ loop: `count` cuLaunchKernel calls with the launcher's packed "
        "arguments; returns elapsed nanoseconds (benchmark baseline).");
  m.def("_cpp_tma_burst", &cpp_tma_burst, nb::arg("a"), nb::arg("b"), nb::arg("c"),
        nb::arg("count"), nb::arg("launcher") = nb::none(),
        "Native C++ loop of the seed-001/000 workloads (benchmark baseline); nanoseconds.");
  // torch ops (python/nanocuda/torch_ops) move their per-call dtype/contiguity checks here.
  m.def("_launcher_require", [](nb::handle launcher, std::size_t index, std::vector<std::uint32_t> dtypes,
                                bool contiguous) {
          LaunchState& st = state_of(launcher);
          if (index >= st.kernel.param_layout().count() || dtypes.size() > 4)
            throw nb::value_error("_launcher_require: no such parameter, or more than 4 dtypes");
          SlotChecks& c = st.slots[index].checks;
          c = SlotChecks{};
          for (std::size_t k = 0; k < dtypes.size(); ++k) c.dtypes[k] = dtypes[k];
          c.contiguous = contiguous;
          c.any = contiguous || !dtypes.empty();
        }, nb::arg("launcher"), nb::arg("index"), nb::arg("dtypes"), nb::arg("contiguous"),
        "Makes `launcher` check the tensor at parameter `index`: DLPack dtype codes (code | bits << 8 |\n"
        "lanes << 16; any may match; empty: any dtype) and contiguity. For torch_ops.");
  m.def("_launcher_map_stats", [](nb::handle launcher) {
          LaunchState& st = state_of(launcher);
          nb::dict out;
          for (std::size_t i = 0; i < st.bound_maps.size(); ++i)
            if (st.bound_maps[i])
              out[nb::int_(i)] = nb::make_tuple(st.bound_maps[i]->encodes(),
                                                st.bound_maps[i]->address_swaps());
          return out;
        }, nb::arg("launcher"),
        "{parameter: (re-encodes, address swaps)} of a Launcher's bound tensor maps (tests).");
  m.def("_pack_args",
        [](nb::list layout, const std::string& name, nb::args args) {
          // Packs against a hand-built layout with the launch path's code; for tests.
          ParamLayout l;
          for (nb::handle p : layout)
            l.params.push_back({nb::cast<std::uint32_t>(p[0]), nb::cast<std::uint32_t>(p[1])});
          std::vector<unsigned char> buf(l.total_size() + 16);
          auto* aligned = reinterpret_cast<unsigned char*>(
              (reinterpret_cast<std::uintptr_t>(buf.data()) + 15) & ~std::uintptr_t{15});
          std::vector<void*> ptrs(l.count() + 1);
          std::vector<ArgSlot> slots(l.count() + 1);
          ParamPacker packer(l, name, aligned, ptrs.data());
          std::vector<PyObject*> raw;
          for (nb::handle a : args) raw.push_back(a.ptr());
          pack_args(packer, raw.data(), raw.size(), -1, slots.data());
          return nb::bytes(reinterpret_cast<const char*>(aligned), l.total_size());
        },
        nb::arg("layout"), nb::arg("name"), nb::arg("args"));
}

}  // namespace nanocuda::py
