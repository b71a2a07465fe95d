// One registration function per binding file; module.cpp calls them in order.
#pragma once

#include <nanobind/nanobind.h>

namespace nanocuda::py {

// `_nanocuda._testing`: test hooks, kept out of the public module's dir() and out of the
// wheel (built only with NANOCUDA_TEST_HOOKS). Made on first use: testing_module(m).def(...).
nanobind::module_ testing_module(nanobind::module_& m);
// `_nanocuda._bench`: the native baseline loops `nanocuda bench` runs (python/ext/bench/).
nanobind::module_ bench_module(nanobind::module_& m);
// `_nanocuda._internal`: what the package calls itself (at import, `nanocuda info`).
nanobind::module_ internal_module(nanobind::module_& m);

void register_errors(nanobind::module_& m);
void bind_launch(nanobind::module_& m);
void bind_graph(nanobind::module_& m);
void bind_device(nanobind::module_& m);
void bind_stream(nanobind::module_& m);
void bind_event(nanobind::module_& m);
void bind_green_context(nanobind::module_& m);  // after Device and Stream
void bind_buffer(nanobind::module_& m);
void bind_array_view(nanobind::module_& m);  // StridedMemoryView internals
void bind_smv_exchange(nanobind::module_& m);  // StridedMemoryView.__dlpack_c_exchange_api__
void bind_smv_fast(nanobind::module_& m);      // its from_dlpack/as_tensor_map fast paths
void bind_memory_resource(nanobind::module_& m);  // after Device and Buffer
void bind_ipc(nanobind::module_& m);  // after bind_memory_resource and Event
void bind_graph_memory_resource(nanobind::module_& m);  // after bind_memory_resource and bind_graph
void bind_managed_ops(nanobind::module_& m);  // after Buffer
void bind_info(nanobind::module_& m);
void bind_texture(nanobind::module_& m);     // _texture: arrays, textures, surfaces
void bind_checkpoint(nanobind::module_& m);  // _checkpoint
void bind_nvml(nanobind::module_& m);  // nanocuda.system's NVML queries, in _internal
void bind_tensor_map(nanobind::module_& m);
void bind_compile(nanobind::module_& m);
void bind_torch_bridge(nanobind::module_& m);
void bind_protocols(nanobind::module_& m);  // last: ==, hash, repr and pickling of the bound types
// Loops in _bench (python/ext/bench/): native baselines, straight driver calls.
void bind_launch_loops(nanobind::module_& m);  // after bind_launch
void bind_graph_loops(nanobind::module_& m);   // after bind_graph
// Hooks in _testing (python/ext/testing/), built only with NANOCUDA_TEST_HOOKS.
void bind_interop_hooks(nanobind::module_& m);
void bind_tma_hooks(nanobind::module_& m);
void bind_launch_hooks(nanobind::module_& m);  // after bind_launch
void bind_nvml_hooks(nanobind::module_& m);

}  // namespace nanocuda::py
