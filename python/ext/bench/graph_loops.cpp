// Native baselines for `nanocuda bench graphs` (in _bench): the same work as the Python
// paths, written straight against the driver table, so the ratio shows the Python layer's cost.
#include <nanobind/nanobind.h>

#include <chrono>
#include <vector>

#include "bindings.h"
#include "fastpath/fastcall.h"
#include "fastpath/py_int.h"
#include "interop/interop.h"
#include "launch/py_graph.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/launch/detail/launch_context.h"
#include "nanocuda/launch/graph_builder.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

using Clock = std::chrono::steady_clock;
std::int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}


// `count` cuLaunchKernel calls of step(int* counter) on one block, then a sync.
std::int64_t launch_loop(const Kernel& k, std::uint64_t counter, int count, nb::handle stream) {
  StreamRef s = to_stream(stream, "bench");
  CUfunction f = k.function(s.context());
  CUdeviceptr p = counter;
  void* params[] = {&p};
  const auto& api = detail::driver();
  auto t0 = Clock::now();
  for (int i = 0; i < count; ++i) api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s.handle(), params, nullptr);
  detail::check(api.cuStreamSynchronize(s.handle()), "cuStreamSynchronize");
  return ns_since(t0);
}

// A while-loop graph built with the explicit driver API (no capture):
// conditional(while, handle) { count_to(handle, counter, n) }.
struct NativeLoop {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  ~NativeLoop() {
    if (exec) detail::destroy_graph_exec(exec);
    if (graph) detail::destroy_graph(graph);
  }
};

std::int64_t conditional_graph(const Kernel& k, std::uint64_t counter, int n, int repeats,
                               nb::handle stream) {
  StreamRef s = to_stream(stream, "bench");
  CurrentContext guard(s.context());
  const auto& api = detail::driver();
  NativeLoop loop;
  detail::check(api.cuGraphCreate(&loop.graph, 0), "cuGraphCreate");
  CUgraphConditionalHandle h = 0;
  detail::check(api.cuGraphConditionalHandleCreate(&h, loop.graph, s.context().handle(), 1,
                                                   CU_GRAPH_COND_ASSIGN_DEFAULT),
                "cuGraphConditionalHandleCreate");
  CUgraphNodeParams cond{};
  cond.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  cond.conditional = {h, CU_GRAPH_COND_TYPE_WHILE, 1, nullptr, s.context().handle()};
  CUgraphNode node = nullptr;
  detail::check(api.cuGraphAddNode(&node, loop.graph, nullptr, nullptr, 0, &cond), "cuGraphAddNode");
  CUdeviceptr p = counter;
  int limit = n;
  void* params[] = {&h, &p, &limit};
  CUgraphNodeParams kn{};
  kn.type = CU_GRAPH_NODE_TYPE_KERNEL;
  kn.kernel.func = k.function(s.context());
  kn.kernel.gridDimX = kn.kernel.gridDimY = kn.kernel.gridDimZ = 1;
  kn.kernel.blockDimX = kn.kernel.blockDimY = kn.kernel.blockDimZ = 1;
  kn.kernel.kernelParams = params;
  CUgraphNode knode = nullptr;
  detail::check(api.cuGraphAddNode(&knode, cond.conditional.phGraph_out[0], nullptr, nullptr, 0, &kn),
                "cuGraphAddNode");
  detail::check(api.cuGraphInstantiateWithFlags(&loop.exec, loop.graph, 0), "cuGraphInstantiate");
  std::int64_t best = -1;
  for (int r = 0; r < repeats; ++r) {
    detail::check(api.cuMemsetD32Async(p, 0, 1, s.handle()), "cuMemsetD32Async");
    detail::check(api.cuStreamSynchronize(s.handle()), "cuStreamSynchronize");
    auto t0 = Clock::now();
    api.cuGraphLaunch(loop.exec, s.handle());
    detail::check(api.cuStreamSynchronize(s.handle()), "cuStreamSynchronize");
    std::int64_t t = ns_since(t0);
    if (best < 0 || t < best) best = t;
  }
  return best;
}

// Capture `count` launches of step(int*), end, instantiate; the build+instantiate time.
std::int64_t build_graph(const Kernel& k, std::uint64_t counter, int count) {
  Stream s = Stream::create(Device(0));
  CurrentContext guard(s.context());
  const auto& api = detail::driver();
  CUfunction f = k.function(s.context());
  CUdeviceptr p = counter;
  void* params[] = {&p};
  auto t0 = Clock::now();
  detail::check(api.cuStreamBeginCapture(s.handle(), CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  for (int i = 0; i < count; ++i) api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s.handle(), params, nullptr);
  NativeLoop g;
  detail::check(api.cuStreamEndCapture(s.handle(), &g.graph), "cuStreamEndCapture");
  detail::check(api.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0), "cuGraphInstantiate");
  std::int64_t t = ns_since(t0);
  return t;
}

// cuGraphCreate, `count` cuGraphAddKernelNode of step(int*) with no dependencies, instantiate:
// the explicit build + instantiate time.
std::int64_t build_explicit(const Kernel& k, std::uint64_t counter, int count) {
  Device dev(0);
  CurrentContext guard(*dev.context());
  const auto& api = detail::driver();
  CUdeviceptr p = counter;
  void* params[] = {&p};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = k.function(*dev.context());
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = params;
  auto t0 = Clock::now();
  NativeLoop g;
  detail::check(api.cuGraphCreate(&g.graph, 0), "cuGraphCreate");
  for (int i = 0; i < count; ++i) {
    CUgraphNode node = nullptr;
    detail::check(api.cuGraphAddKernelNode(&node, g.graph, nullptr, 0, &kp), "cuGraphAddKernelNode");
  }
  detail::check(api.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0), "cuGraphInstantiate");
  return ns_since(t0);
}

// cuGraphExecKernelNodeSetParams on every kernel node of `graph` with step(int*)-shaped
// arguments (pointer `counter`): the per-node update without Python. kCheck: with the launch
// policy's context check before each call, as every nanocuda update makes it (scripts/gpu-gupd:
// what that check costs on a real driver; not a bench row).
template <bool kCheck>
std::int64_t update_nodes(PyGraph& pg, std::uint64_t counter) {
  Graph& g = pg.ready(kCheck ? "cpp_graph_update_checked" : "cpp_graph_update");
  const auto& nodes = g.kernel_nodes();
  [[maybe_unused]] CUcontext ctx = g.device().context()->handle();
  CurrentContext guard(*g.device().context());
  const auto& api = detail::driver();
  CUdeviceptr p = counter;
  void* params[] = {&p};
  auto t0 = Clock::now();
  for (const auto& n : nodes) {
    CUDA_KERNEL_NODE_PARAMS kp = n.params;
    kp.kernelParams = params;
    kp.extra = nullptr;
    if constexpr (kCheck) make_launch_context_current(ctx);
    api.cuGraphExecKernelNodeSetParams(g.exec_handle(), n.node, &kp);
  }
  return ns_since(t0);
}

// cpp_graph_update_node(graph, index, counter): the C++ loop's work for one node (same struct,
// same call, no packing or checks), as a bare METH_FASTCALL function: a Python loop of these
// is the floor any Python update API can reach (the loop, one C call, the driver call).
PyTypeObject* g_graph_type = nullptr;
PyObject* update_node_bare(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  long long index = 0, counter = 0;
  if (nargs != 3 || Py_TYPE(args[0]) != g_graph_type || !PyLong_CheckExact(args[1]) ||
      !PyLong_CheckExact(args[2]) || !read_small_int(args[1], &index) || !read_small_int(args[2], &counter))
    throw nb::type_error("cpp_graph_update_node(graph, index, counter): a Graph and two ints");
  Graph& g = nb::inst_ptr<PyGraph>(args[0])->ready("cpp_graph_update_node");
  const auto& nodes = g.kernel_nodes();
  if (index < 0 || static_cast<std::size_t>(index) >= nodes.size()) throw nb::index_error("no such kernel node");
  CUdeviceptr p = static_cast<CUdeviceptr>(counter);
  void* params[] = {&p};
  CUDA_KERNEL_NODE_PARAMS kp = nodes[static_cast<std::size_t>(index)].params;
  kp.kernelParams = params;
  kp.extra = nullptr;
  detail::driver().cuGraphExecKernelNodeSetParams(g.exec_handle(), nodes[static_cast<std::size_t>(index)].node, &kp);
  Py_RETURN_NONE;
}
PyMethodDef g_update_node_def = fastcall_method<update_node_bare>(
    "cpp_graph_update_node",
    "cpp_graph_update_node(graph, index, counter)\n--\n\n"
    "The native update loop's work for one kernel node (no checks, no packing): a Python loop\n"
    "of these is the floor of a Python update API (bench graphs).");

}  // namespace

void bind_graph_loops(nb::module_& parent) {
  nb::module_ m = bench_module(parent);
  m.def("cpp_graph_burst", [](PyGraph& g, int count) {
    Graph& graph = g.ready("cpp_graph_burst");
    CUstream h = g.stream->handle();
    auto t0 = Clock::now();
    for (int i = 0; i < count; ++i) graph.launch_unchecked(h);
    return ns_since(t0);
  }, nb::arg("graph"), nb::arg("count"),
  "Native C++ loop of `count` cuGraphLaunch calls; returns nanoseconds (benchmark baseline).");
  m.def("cpp_graph_launch_loop", &launch_loop, nb::arg("kernel"), nb::arg("counter"),
        nb::arg("count"), nb::arg("stream"),
        "Native loop of `count` cuLaunchKernel(kernel(counter)) + sync; nanoseconds (bench).");
  m.def("cpp_graph_while", &conditional_graph, nb::arg("kernel"), nb::arg("counter"),
        nb::arg("n"), nb::arg("repeats"), nb::arg("stream"),
        "A while-loop graph built with the driver API running kernel(handle, counter, n) until\n"
        "the counter reaches n; best launch+sync time of `repeats`, nanoseconds (bench).");
  m.def("cpp_graph_build", &build_graph, nb::arg("kernel"), nb::arg("counter"), nb::arg("count"),
        "Native capture of `count` launches + instantiate; nanoseconds (bench).");
  m.def("cpp_graph_build_explicit", &build_explicit, nb::arg("kernel"), nb::arg("counter"),
        nb::arg("count"), "Native cuGraphAddKernelNode x `count` + instantiate; nanoseconds (bench).");
  m.def("cpp_graph_update", &update_nodes<false>, nb::arg("graph"), nb::arg("counter"),
        "Native cuGraphExecKernelNodeSetParams over every kernel node; nanoseconds (bench).");
  m.def("cpp_graph_update_checked", &update_nodes<true>, nb::arg("graph"), nb::arg("counter"),
        "cpp_graph_update with the context check nanocuda's updates make before each call; nanoseconds.");
  g_graph_type = reinterpret_cast<PyTypeObject*>(nb::type<PyGraph>().ptr());
  add_function(m, &g_update_node_def);
}

}  // namespace nanocuda::py
