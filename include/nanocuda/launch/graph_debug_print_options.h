// What GraphBuilder/Graph::debug_dot_print() writes (cuda.core's GraphDebugPrintOptions).
#pragma once

namespace nanocuda {

struct GraphDebugPrintOptions {
  bool verbose = false;
  bool runtime_types = false;
  bool kernel_node_params = false;
  bool memcpy_node_params = false;
  bool memset_node_params = false;
  bool host_node_params = false;
  bool event_node_params = false;
  bool ext_semas_signal_node_params = false;
  bool ext_semas_wait_node_params = false;
  bool kernel_node_attributes = false;
  bool handles = false;
  bool mem_alloc_node_params = false;
  bool mem_free_node_params = false;
  bool batch_mem_op_node_params = false;
  bool extra_topo_info = false;
  bool conditional_node_params = false;

  // The CUgraphDebugDot_flags bit set for cuGraphDebugDotPrint.
  [[nodiscard]] unsigned flags() const noexcept;
};

}  // namespace nanocuda
