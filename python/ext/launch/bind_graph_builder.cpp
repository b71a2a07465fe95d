// Python bindings for GraphBuilder (cuda.core's names), conditional handles, graph options,
// host callbacks, and Device/Stream.create_graph_builder.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "core/py_size.h"
#include "interop/interop.h"
#include "launch/py_graph.h"
#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/launch/graph_builder.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

nb::object g_handle_type;

const Event& event_arg(nb::handle event, const char* call) {
  if (!nb::isinstance<Event>(event))
    throw nb::type_error((std::string(call) + ": event must be a nanocuda.Event, got " +
                          Py_TYPE(event.ptr())->tp_name).c_str());
  return nb::cast<const Event&>(event);
}  // ConditionalHandle: an int subclass that remembers its graph

// A Python callable run by a host node. The driver calls run() on its own thread: it takes
// the GIL, and an exception is recorded and raised by the next checked nanocuda call (for
// example Stream.sync()), so it is never lost and never unwinds into the driver.
struct PyCallback {
  PyObject* fn;
  static void CUDA_CB run(void* data) {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject* fn = static_cast<PyCallback*>(data)->fn;
    PyObject* result = PyObject_CallNoArgs(fn);
    if (result) {
      Py_DECREF(result);
    } else {
      std::string text = "(unprintable exception)";
#if PY_VERSION_HEX >= 0x030C0000
      PyObject* exc = PyErr_GetRaisedException();
#else
      PyObject *type = nullptr, *exc = nullptr, *tb = nullptr;
      PyErr_Fetch(&type, &exc, &tb);
      PyErr_NormalizeException(&type, &exc, &tb);
      Py_XDECREF(type);
      Py_XDECREF(tb);
#endif
      if (PyObject* s = exc ? PyObject_Str(exc) : nullptr) {
        if (const char* c = PyUnicode_AsUTF8(s))
          text = std::string(Py_TYPE(exc)->tp_name) + ": " + c;
        Py_DECREF(s);
      }
      PyErr_Clear();
      Py_XDECREF(exc);
      PyObject* name = PyObject_GetAttrString(fn, "__qualname__");
      std::string fname = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "callable";
      Py_XDECREF(name);
      PyErr_Clear();
      detail::record_deferred_failure(CUDA_ERROR_LAUNCH_FAILED, "graph host callback",
                                      "Python callback " + fname + " raised " + text);
    }
    PyGILState_Release(gil);
  }
};

}  // namespace

std::shared_ptr<void> make_py_callback(nb::handle fn, CUhostFn* run) {
  auto cb = std::shared_ptr<PyCallback>(new PyCallback{fn.ptr()}, [](PyCallback* c) {
    if (PyGILState_Check()) {  // also at shutdown, when Py_IsInitialized() is already false
      Py_DECREF(c->fn);
    } else if (Py_IsInitialized()) {
      PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(c->fn);
      PyGILState_Release(gil);
    }
    delete c;
  });
  Py_INCREF(fn.ptr());
  *run = &PyCallback::run;
  return cb;
}

namespace {

// Owns a Python reference from C++ shared state; drops it with the GIL held.
std::shared_ptr<void> hold(nb::handle obj) {
  Py_INCREF(obj.ptr());
  return std::shared_ptr<void>(obj.ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(p));
    PyGILState_Release(gil);
  });
}

// The handle value, checked to belong to `b`'s graph (or one enclosing it).
CUgraphConditionalHandle handle_of(const GraphBuilder& b, nb::handle h, const char* where) {
  if (!PyLong_Check(h.ptr()))
    throw nb::type_error((std::string(where) + ": expected a handle from "
                          "create_conditional_handle(), got " + Py_TYPE(h.ptr())->tp_name).c_str());
  if (nb::hasattr(h, "graph_id")) b.require_graph(nb::cast<std::uint64_t>(h.attr("graph_id")), where);
  return static_cast<CUgraphConditionalHandle>(size_arg(h, where, "handle"));
}

nb::tuple as_tuple(const std::vector<GraphBuilder>& v) {
  nb::list out;
  for (const auto& b : v) out.append(nb::cast(b));
  return nb::tuple(out);
}

constexpr std::pair<const char*, bool GraphDebugPrintOptions::*> kDebugFields[] = {
    {"verbose", &GraphDebugPrintOptions::verbose},
    {"runtime_types", &GraphDebugPrintOptions::runtime_types},
    {"kernel_node_params", &GraphDebugPrintOptions::kernel_node_params},
    {"memcpy_node_params", &GraphDebugPrintOptions::memcpy_node_params},
    {"memset_node_params", &GraphDebugPrintOptions::memset_node_params},
    {"host_node_params", &GraphDebugPrintOptions::host_node_params},
    {"event_node_params", &GraphDebugPrintOptions::event_node_params},
    {"ext_semas_signal_node_params", &GraphDebugPrintOptions::ext_semas_signal_node_params},
    {"ext_semas_wait_node_params", &GraphDebugPrintOptions::ext_semas_wait_node_params},
    {"kernel_node_attributes", &GraphDebugPrintOptions::kernel_node_attributes},
    {"handles", &GraphDebugPrintOptions::handles},
    {"mem_alloc_node_params", &GraphDebugPrintOptions::mem_alloc_node_params},
    {"mem_free_node_params", &GraphDebugPrintOptions::mem_free_node_params},
    {"batch_mem_op_node_params", &GraphDebugPrintOptions::batch_mem_op_node_params},
    {"extra_topo_info", &GraphDebugPrintOptions::extra_topo_info},
    {"conditional_node_params", &GraphDebugPrintOptions::conditional_node_params},
};

void bind_options(nb::module_& m) {
  nb::class_<GraphCompleteOptions>(m, "GraphCompleteOptions",
      "How GraphBuilder.complete() instantiates (cuda.core's GraphCompleteOptions).\n\n"
      "    graph = builder.complete(nanocuda.GraphCompleteOptions(upload_stream=s))")
      .def("__init__", [](GraphCompleteOptions* self, nb::handle auto_free, nb::handle upload,
                          nb::handle device_launch, nb::handle node_priority) {
             constexpr const char* call = "GraphCompleteOptions";
             GraphCompleteOptions o;
             o.auto_free_on_launch = bool_arg(auto_free, call, "auto_free_on_launch");
             if (!upload.is_none()) o.upload_stream = to_stream(upload, "GraphCompleteOptions(upload_stream=)");
             o.device_launch = bool_arg(device_launch, call, "device_launch");
             o.use_node_priority = bool_arg(node_priority, call, "use_node_priority");
             (void)o.flags();  // reject illegal combinations here, not at complete()
             new (self) GraphCompleteOptions(std::move(o));
           }, nb::kw_only(), nb::arg("auto_free_on_launch").none() = false,
           nb::arg("upload_stream").none() = nb::none(), nb::arg("device_launch").none() = false,
           nb::arg("use_node_priority").none() = false)
      .def_rw("auto_free_on_launch", &GraphCompleteOptions::auto_free_on_launch,
              "Free the graph's unfreed allocations before each relaunch.")
      .def_rw("device_launch", &GraphCompleteOptions::device_launch,
              "Make the graph launchable from device code (not with auto_free_on_launch).")
      .def_rw("use_node_priority", &GraphCompleteOptions::use_node_priority,
              "Run nodes at their own priorities rather than the launch stream's.")
      .def_prop_ro("upload_stream", [](const GraphCompleteOptions& o) -> std::optional<PyStream> {
                     if (!o.upload_stream) return std::nullopt;
                     return PyStream::of(*o.upload_stream);
                   },
              "Stream to upload the graph on right after instantiation (None: no upload).");

  auto dbg = nb::class_<GraphDebugPrintOptions>(m, "GraphDebugPrintOptions",
      "What debug_dot_print() writes (cuda.core's GraphDebugPrintOptions); all False by default.\n\n"
      "    graph.debug_dot_print('g.dot', nanocuda.GraphDebugPrintOptions(verbose=True))");
  dbg.def("__init__", [](GraphDebugPrintOptions* self, nb::kwargs kw) {
    GraphDebugPrintOptions o;
    for (auto [key, value] : kw) {
      std::string k = nb::cast<std::string>(key);
      bool found = false;
      for (const auto& [name, member] : kDebugFields)
        if (k == name) {
          if (!PyBool_Check(value.ptr()))
            throw nb::type_error(("GraphDebugPrintOptions: " + k + " must be a bool, got " +
                                  std::string(Py_TYPE(value.ptr())->tp_name)).c_str());
          o.*member = value.ptr() == Py_True;
          found = true;
        }
      if (!found) throw nb::type_error(("GraphDebugPrintOptions: no option '" + k + "'").c_str());
    }
    new (self) GraphDebugPrintOptions(o);
  }, nb::arg("kwargs"));
  for (const auto& [name, member] : kDebugFields)
    dbg.def_rw(name, member, "Include this detail in debug_dot_print's output.");
  // cuda.core's options are dataclasses (its users read __dataclass_fields__, or call
  // dataclasses.fields/replace): the fields of the equivalent dataclass, every one bool = False.
  nb::module_ dataclasses = nb::module_::import_("dataclasses");
  nb::list spec;
  for (const auto& [name, member] : kDebugFields)
    spec.append(nb::make_tuple(name, nb::handle(reinterpret_cast<PyObject*>(&PyBool_Type)),
                               dataclasses.attr("field")(nb::arg("default") = false)));
  nb::object proto = dataclasses.attr("make_dataclass")("GraphDebugPrintOptions", spec);
  dbg.attr("__dataclass_fields__") = proto.attr("__dataclass_fields__");
}

}  // namespace

void bind_graph_builder(nb::module_& m) {
  bind_options(m);

  nb::dict ns;
  ns["__doc__"] = "A conditional node's handle: an int (pass it to kernels as a 64-bit "
                  "argument) that remembers the graph it was made in (graph_id).";
  ns["__module__"] = "nanocuda";
  nb::object int_type = nb::borrow(reinterpret_cast<PyObject*>(&PyLong_Type));
  g_handle_type = nb::module_::import_("builtins").attr("type")("ConditionalHandle",
                                                                 nb::make_tuple(int_type), ns);
  m.attr("ConditionalHandle") = g_handle_type;

  // One implementation each, bound under nanocuda's name and cuda.core's.
  auto create_handle = [](GraphBuilder& b, nb::handle default_value) {
    std::optional<unsigned> dv;
    // A condition is a truth value: True/False are 1/0, as in cuda.core (and C's while (cond)).
    if (PyBool_Check(default_value.ptr())) dv = default_value.ptr() == Py_True ? 1u : 0u;
    else if (!default_value.is_none())
      dv = static_cast<unsigned>(int_arg(default_value, "GraphBuilder.create_conditional_handle", "default_value", 0, 0xFFFFFFFFll));
    CUgraphConditionalHandle h = b.create_conditional_handle(dv);
    nb::object obj = g_handle_type(h);
    obj.attr("graph_id") = b.graph_id();
    return obj;
  };
  auto if_cond = [](GraphBuilder& b, nb::handle h) { return b.if_cond(handle_of(b, h, "GraphBuilder.if_cond")); };
  auto if_then = [](GraphBuilder& b, nb::handle h) { return b.if_cond(handle_of(b, h, "GraphBuilder.if_then")); };
  nb::class_<GraphBuilder>(m, "GraphBuilder",
      "A graph under construction by stream capture (cuda.core's GraphBuilder). Anything queued on\n"
      "it while building (nanocuda.launch(builder, ...), a Launcher bound to it, torch work on\n"
      "builder.stream) becomes a node; it is accepted wherever a stream is.\n\n"
      "    b = device.create_graph_builder().begin_building()\n"
      "    nanocuda.launch(b, config, kernel, x, n)\n"
      "    graph = b.end_building().complete()\n"
      "    graph.launch(stream)")
      .def("begin_building", [](GraphBuilder& b, nb::handle mode) -> GraphBuilder& {
             if (!PyUnicode_Check(mode.ptr()))  // refused by the core's rule, shown as Python prints it
               return b.begin_building(GraphBuilder::mode_from_name({}, nb::str(nb::repr(mode)).c_str()));
             return b.begin_building(GraphBuilder::mode_from_name(nb::cast<std::string>(mode)));
           }, nb::arg("mode").none() = "relaxed", nb::rv_policy::reference_internal,
           "Start capturing; mode is 'relaxed' (default), 'thread_local' or 'global'. Returns self.")
      .def("end_building", &GraphBuilder::end_building, nb::rv_policy::reference_internal,
           "Stop capturing (all split() builders must be joined). Returns self.")
      .def("complete", [](const GraphBuilder& b, nb::handle options) {
             // nanocuda.graph.GraphCompleteOptions keeps a non-stream upload_stream to check here.
             if (nb::hasattr(options, "_pending_upload") && !options.attr("_pending_upload").is_none())
               throw nb::type_error(("GraphBuilder.complete: GraphCompleteOptions.upload_stream must be a "
                                     "Stream, got " + std::string(Py_TYPE(options.attr("_pending_upload").ptr())->tp_name)).c_str());
             PyGraph g;
             g.set(b.complete(options_arg<GraphCompleteOptions>(options, "GraphBuilder.complete", "GraphCompleteOptions")));
             g.stream = b.stream();
             return g;
           }, nb::arg("options").none() = nb::none(),
           "Instantiate the built graph; returns a launchable nanocuda.Graph.")
      .def("split", [](nb::handle self, nb::handle count) {
             GraphBuilder& b = nb::cast<GraphBuilder&>(self);
             nb::tuple out = as_tuple(b.split(static_cast<std::size_t>(int_arg(count, "GraphBuilder.split", "count", 1, 1 << 16))));
             nb::list items(out);  // the first is this builder: the same Python object (cuda.core)
             items[0] = self;
             return nb::tuple(items);
           },
           nb::arg("count").none(),
           "Fork into `count` builders (this one first) that record in parallel; join them again.")
      .def_static("join", [](nb::args builders) {
             std::vector<GraphBuilder> v;
             for (nb::handle h : builders) {
               if (!nb::isinstance<GraphBuilder>(h))
                 throw nb::type_error(("GraphBuilder.join: every argument must be a GraphBuilder, got " +
                                       std::string(Py_TYPE(h.ptr())->tp_name)).c_str());
               v.push_back(nb::cast<GraphBuilder>(h));
             }
             GraphBuilder joined = GraphBuilder::join(v);
             for (nb::handle h : builders)  // the continuing builder's own Python object
               if (nb::cast<GraphBuilder&>(h).same_as(joined)) return nb::borrow<nb::object>(h);
             return nb::cast(joined);
           }, nb::arg("builders"),
           "Join builders from one split(); returns the one that continues (the non-forked one).")
      .def("add_child", &GraphBuilder::add_child, nb::arg("child_graph"),
           "Add a finished builder's graph as a child-graph node (copied).")
      .def("embed", &GraphBuilder::add_child, nb::arg("child"), "cuda.core's name for add_child.")
      .def("create_conditional_handle", create_handle, nb::arg("default_value").none() = nb::none(),
           "A handle for if_cond/if_else/while_loop/switch; kernels set it with\n"
           "nanocuda::set_conditional (nanocuda/device/graph.cuh). With default_value, every\n"
           "launch of the graph starts from it; without, the value persists across launches.")
      .def("create_condition", create_handle, nb::arg("default_value").none() = nb::none(),
           "cuda.core's name for create_conditional_handle (the handle is cuda.core's GraphCondition).")
      .def("if_cond", if_cond, nb::arg("handle"), "Add an if node; returns the body's builder (begin_building() it).")
      .def("if_then", if_then, nb::arg("condition"), "cuda.core's name for if_cond.")
      .def("if_else", [](GraphBuilder& b, nb::handle h) { return b.if_else(handle_of(b, h, "GraphBuilder.if_else")); },
           nb::arg("handle"), "Add an if/else node; returns (then_builder, else_builder).")
      .def("while_loop", [](GraphBuilder& b, nb::handle h) {
             return b.while_loop(handle_of(b, h, "GraphBuilder.while_loop"));
           }, nb::arg("handle"),
           "Add a while node: the body runs while the handle is nonzero; returns its builder.")
      .def("switch", [](GraphBuilder& b, nb::handle h, nb::handle count) {
             auto n = static_cast<std::size_t>(int_arg(count, "GraphBuilder.switch", "count", 1, 1 << 16));
             return as_tuple(b.switch_(handle_of(b, h, "GraphBuilder.switch"), n));
           }, nb::arg("handle").none(), nb::arg("count").none(),
           "Add a switch node with `count` bodies; body i runs when the handle is i.")
      .def("memset", [](GraphBuilder& b, nb::handle dst, nb::handle value_obj, nb::handle count_obj,
                        nb::handle size_obj) {
             constexpr const char* call = "GraphBuilder.memset";
             auto value = static_cast<unsigned>(int_arg(value_obj, call, "value", 0, 0xFFFFFFFFll));
             std::size_t count = size_arg(count_obj, call, "count");
             auto element_size = static_cast<unsigned>(int_arg(size_obj, call, "element_size", 1, 4));
             b.memset(device_pointer(dst, b.device().ordinal(), call), value, element_size, count,
                      extent_of(dst, call));
           }, nb::arg("dst").none(), nb::arg("value").none(), nb::arg("count").none(), nb::arg("element_size").none() = 1,
           "Add a memset node: `count` elements of `element_size` (1, 2, 4) bytes set to `value`.")
      .def("memcpy", [](GraphBuilder& b, nb::handle dst, nb::handle src, nb::handle nbytes_obj) {
             int dev = b.device().ordinal();
             std::size_t nbytes = size_arg(nbytes_obj, "GraphBuilder.memcpy", "nbytes");
             b.memcpy(device_pointer(dst, dev, "GraphBuilder.memcpy"), device_pointer(src, dev, "GraphBuilder.memcpy"),
                      nbytes, extent_of(dst, "GraphBuilder.memcpy (dst)"), extent_of(src, "GraphBuilder.memcpy (src)"));
           }, nb::arg("dst").none(), nb::arg("src").none(), nb::arg("nbytes").none(),
           "Add a device-to-device memcpy node of `nbytes`.")
      .def("callback", [](GraphBuilder& b, nb::handle fn, nb::handle user_data) {
             // One rule for both graph kinds: nanocuda.graph's _host_fn_parts says what `fn` is
             // (None: a Python callable; else a ctypes CUhostFn's address, data and what to keep).
             nb::object parts = nb::module_::import_("nanocuda.graph._graph_definition")
                                    .attr("_host_fn_parts")(fn, user_data, "GraphBuilder.callback");
             if (parts.is_none()) {
               CUhostFn run = nullptr;
               auto cb = make_py_callback(fn, &run);
               b.host_callback(run, cb.get(), cb);
               return;
             }
             auto t = nb::cast<nb::tuple>(parts);
             b.host_callback(reinterpret_cast<CUhostFn>(nb::cast<std::uintptr_t>(t[0])),
                             reinterpret_cast<void*>(nb::cast<std::uintptr_t>(t[1])), hold(t[2]));
           }, nb::arg("fn"), nb::kw_only(), nb::arg("user_data").none() = nb::none(),
           "Add a host node calling fn() (no arguments) with the GIL; an exception it raises is\n"
           "reported by the next nanocuda call that checks errors (e.g. Stream.sync()). `fn` may also\n"
           "be a ctypes CFUNCTYPE(None, c_void_p) function, called with `user_data` (bytes, copied;\n"
           "or an int address) without the GIL.")
      .def("record_event", [](GraphBuilder& b, nb::handle event) {
             b.record_event(event_arg(event, "GraphBuilder.record_event"));
             b.keep_alive(hold(event));
           }, nb::arg("event").none(), "Add an event-record node (the event is kept alive with the graph).")
      .def("wait_event", [](GraphBuilder& b, nb::handle event) {
             b.wait_event(event_arg(event, "GraphBuilder.wait_event"));
             b.keep_alive(hold(event));
           }, nb::arg("event").none(), "Add a node waiting for `event` (recorded outside or inside the graph).")
      .def("alloc", [](GraphBuilder& b, nb::handle nbytes) {
             return static_cast<std::uint64_t>(b.alloc(size_arg(nbytes, "GraphBuilder.alloc", "nbytes")));
           },
           nb::arg("nbytes").none(),
           "Add a memory-allocation node; returns the device address (fixed for the graph).")
      .def("free", [](GraphBuilder& b, nb::handle ptr) {
             b.free(static_cast<CUdeviceptr>(size_arg(ptr, "GraphBuilder.free", "ptr")));
           },
           nb::arg("ptr").none(), "Add a memory-free node for an address from alloc().")
      .def("debug_dot_print", [](const GraphBuilder& b, const std::string& path, nb::handle options) {
             b.debug_dot_print(path, options_arg<GraphDebugPrintOptions>(options, "GraphBuilder.debug_dot_print",
                                                                         "GraphDebugPrintOptions"));
           }, nb::arg("path"), nb::arg("options").none() = nb::none(),
           "Write the graph (so far) as a Graphviz dot file.")
      .def_prop_ro("is_building", &GraphBuilder::is_building, "Whether the builder is capturing.")
      .def("close", &GraphBuilder::close,
           "Stop using the builder: a capture in progress ends and is discarded; Graphs completed "
           "from it keep working (safe to call twice).")
      .def_prop_ro("is_closed", &GraphBuilder::is_closed,
                   "True after close() (or once join() consumed this split() builder).")
      .def_prop_ro("is_join_required", &GraphBuilder::is_join_required,
                   "True for a split() builder not joined yet (the builder split() was called on never needs one).")
      .def_prop_ro("stream", [](const GraphBuilder& b) { return PyStream::of(b.stream()); },
                   "The stream being captured: queue work on it (torch too) to record it.")
      .def_prop_ro("graph_id", &GraphBuilder::graph_id,
                   "A process-unique number of this builder's graph (handles remember it).")
      .def_prop_ro("topology", &GraphBuilder::topology, "The nodes and edges so far, as text.")
      .def_prop_ro("graph_definition", [](nb::handle b) {  // the class is Python (nanocuda.graph)
             return nb::module_::import_("nanocuda.graph").attr("_builder_graph_definition")(b);
           }, "The built graph as a nanocuda.graph.GraphDefinition (after end_building()): a view\n"
              "sharing the builder's graph, so explicit nodes can be added to a captured graph.")
      .def("__cuda_stream__", [](const GraphBuilder& b) {
             if (!b.is_building())
               throw nb::value_error(("GraphBuilder.__cuda_stream__: " + b.describe() + " is not building; call "
                                      "begin_building() before launching into it").c_str());
             return nb::make_tuple(0, reinterpret_cast<std::uintptr_t>(b.stream().handle()));
           }, "(0, stream handle) while building, so launches record into the graph.")
      .def("__repr__", [](const GraphBuilder& b) {
             return "<nanocuda." + b.describe() + ": " + b.topology() + ">";
           });

  auto make = [](const Device& d) { return GraphBuilder::create(d); };
  nb::handle device_type = nb::type<Device>(), stream_type = nb::type<PyStream>();
  device_type.attr("create_graph_builder") = nb::cpp_function(
      make, nb::scope(device_type), nb::is_method(), nb::name("create_graph_builder"),
      "A GraphBuilder on a new stream of this device.");
  stream_type.attr("create_graph_builder") = nb::cpp_function(
      [](const PyStream& s) { return GraphBuilder::on_stream(s.ref("Stream.create_graph_builder")); }, nb::scope(stream_type), nb::is_method(),
      nb::name("create_graph_builder"), "A GraphBuilder capturing this stream.");
}

}  // namespace nanocuda::py
