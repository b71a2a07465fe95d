// CUDA graphs: capture work on a stream, instantiate it once, replay it cheaply, and
// update captured kernels' arguments without capturing again.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/launch/launch_config.h"
#include "nanocuda/launch/param_layout.h"
#include "nanocuda/core/stream.h"

namespace nanocuda {

namespace detail {
void destroy_graph(CUgraph g) noexcept;
void destroy_graph_exec(CUgraphExec g) noexcept;
}  // namespace detail

// One kernel launch recorded in a graph.
struct GraphKernelNode {
  CUgraphNode node = nullptr;
  CUDA_KERNEL_NODE_PARAMS params{};  // as captured
  ParamLayout layout;                // from cuFuncGetParamInfo
  std::string name;                  // the kernel's name, for errors
};

class Graph {
 public:
  // Starts capturing `stream` (thread-local mode: other threads' CUDA calls are unaffected).
  static void begin_capture(const Stream& stream);
  // Ends the capture and instantiates the graph.
  static Graph end_capture(const Stream& stream);

  // Replays the graph on `stream`.
  void launch(const Stream& stream) const;
  // cuGraphLaunch without checks or error text, for native benchmark loops.
  CUresult launch_unchecked(CUstream stream) const noexcept;

  [[nodiscard]] std::size_t node_count() const noexcept { return node_count_; }
  [[nodiscard]] const std::vector<GraphKernelNode>& kernel_nodes() const noexcept {
    return kernels_;
  }
  // Replaces the arguments of kernel node `index` in the instantiated graph
  // (cuGraphExecKernelNodeSetParams); `params` is packed against kernel_nodes()[index].layout.
  void set_kernel_params(std::size_t index, void** params);

  [[nodiscard]] std::string describe() const;

 private:
  Graph(CUgraph graph, CUgraphExec exec, Device device);
  detail::UniqueHandle<CUgraph, detail::destroy_graph> graph_;
  detail::UniqueHandle<CUgraphExec, detail::destroy_graph_exec> exec_;
  Device device_;
  std::shared_ptr<Context> context_;
  std::size_t node_count_ = 0;
  std::vector<GraphKernelNode> kernels_;
};

}  // namespace nanocuda
