// An instantiated CUDA graph: replay it cheaply, upload it, update its kernels' arguments
// or the whole graph (cuGraphExecUpdate) without instantiating again.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/launch/detail/launch_packed.h"
#include "nanocuda/launch/launch_config.h"
#include "nanocuda/launch/param_buffer.h"
#include "nanocuda/launch/param_packer.h"
#include "nanocuda/compile/param_layout.h"
#include "nanocuda/core/stream_ref.h"
#include "nanocuda/launch/graph_complete_options.h"
#include "nanocuda/launch/graph_debug_print_options.h"

namespace nanocuda {

namespace detail {
void destroy_graph(CUgraph g) noexcept;
void destroy_graph_exec(CUgraphExec g) noexcept;
}  // namespace detail

class GraphDefinition;
struct GraphAttachments;  // src/launch/graph_keepalive.h

// One kernel launch recorded in a graph.
struct GraphKernelNode {
  CUgraphNode node = nullptr;
  CUDA_KERNEL_NODE_PARAMS params{};  // as captured
  ParamLayout layout;                // from cuFuncGetParamInfo
  std::string name;                  // the kernel's name, for errors
};

namespace detail {
// What a kernel node's argument updates reuse (Graph::try_pack_kernel_params): the node's
// parameters with kernelParams pointing into a packed-argument buffer of its own, and a packer
// over that buffer, so an update is packing plus one driver call, as a Launcher's call is.
struct KernelNodeArgs {
  explicit KernelNodeArgs(const GraphKernelNode& node);
  CUDA_KERNEL_NODE_PARAMS params;
  ParamBuffer buffer;
  ParamPacker packer;  // over buffer, against node.layout
  bool busy = false;   // a try_pack_kernel_params is packing into buffer
};
// The stream of a Graph's last launch (a movable atomic: concurrent launches are allowed), so
// launch() does bookkeeping only when the stream changes: one load and compare per replay.
struct LastLaunchStream {
  static CUstream none() noexcept { return reinterpret_cast<CUstream>(~std::uintptr_t{0}); }
  std::atomic<CUstream> handle{none()};
  LastLaunchStream() = default;
  LastLaunchStream(LastLaunchStream&& other) noexcept : handle(other.handle.load(std::memory_order_relaxed)) {}
  LastLaunchStream& operator=(LastLaunchStream&& other) noexcept {
    handle.store(other.handle.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }
};
}  // namespace detail

class Graph {
 public:
  // Starts capturing `stream` (thread-local mode: other threads' CUDA calls are unaffected).
  static void begin_capture(StreamRef stream);
  // Ends the capture and instantiates the graph.
  static Graph end_capture(StreamRef stream);
  // Instantiates `graph`; `owner` keeps the definition (and anything it needs, such as
  // host-callback data) alive for the Graph's lifetime.
  static Graph instantiate(CUgraph graph, std::shared_ptr<void> owner, const Device& device,
                           const GraphCompleteOptions& options = {});

  // Replays the graph on `stream`. A GraphDefinition's Graph remembers the streams it was
  // launched on since its last update from a definition, so that update releases what the
  // replaced definition's nodes used only after those launches are done.
  void launch(StreamRef stream) const;
  // cuGraphLaunch without checks or error text, for native benchmark loops (not remembered:
  // do not update from a definition while such launches run).
  CUresult launch_unchecked(CUstream stream) const noexcept;

  [[nodiscard]] std::size_t node_count() const noexcept { return node_count_; }
  // Read from the driver on first use (a 1000-node build need not pay for it).
  [[nodiscard]] const std::vector<GraphKernelNode>& kernel_nodes() const {
    if (!kernels_read_) read_kernel_nodes(graph_, false);
    return kernels_;
  }
  // Replaces the arguments of kernel node `index` in the instantiated graph
  // (cuGraphExecKernelNodeSetParams); `params` is packed against kernel_nodes()[index].layout.
  // The driver copies the bytes; no heap allocation; the graph's context is made current (and
  // left so) when it is not, as launches do. The node keeps the function and launch shape it has.
  void set_kernel_params(std::size_t index, void** params);
  // set_kernel_params with the arguments written by `pack(ParamPacker&)` into kernel node
  // `index`'s own buffer (for callers that convert arguments at run time, like Python's):
  // no copy of the node's parameters, one driver call. False (nothing packed or set) while
  // another call is still packing into that buffer (packing may run user code): the caller
  // then packs into storage of its own and calls set_kernel_params.
  // While one is packing, whatever would free what it packs into (update(), set_kernel_node(),
  // closing the graph) raises ValueError instead.
  template <class Pack>
  [[gnu::always_inline]] inline bool try_pack_kernel_params(std::size_t index, Pack&& pack) {
    detail::KernelNodeArgs* a = index < node_args_.size() ? node_args_[index].get() : nullptr;
    if (!a) [[unlikely]] a = &make_node_args(index);
    if (a->busy) [[unlikely]] return false;
    a->busy = true;
    Release release{a->busy};
    pack(a->packer);
    set_packed_params(index, a->params);
    return true;
  }
  // Typed new arguments for kernel node `index`, checked (count and every size) against its
  // layout as a typed launch's are: graph.update_kernel(0, d_out, n). No heap allocation.
  template <class... Args>
  void update_kernel(std::size_t index, const Args&... args) {
    const auto& kernels = kernel_nodes();
    if (index >= kernels.size()) [[unlikely]] throw_no_kernel_node(index);
    const GraphKernelNode& k = kernels[index];
    detail::check_typed_args<Args...>(detail::LaunchTarget{nullptr, k.name, &k.layout, nullptr});
    void* params[sizeof...(Args) + 1] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
    set_kernel_params(index, params);
  }
  // True while a try_pack_kernel_params is packing (its user code may call back into the graph).
  [[nodiscard]] bool is_packing() const noexcept;
  // The kernel_nodes() index of definition node `node`; throws ValueError naming `call` when
  // it is not a kernel node of this graph (a node of another definition, or a non-kernel node).
  [[nodiscard]] std::size_t kernel_index(CUgraphNode node, const char* call) const;
  // Gives kernel node `index` a new function and launch shape as well (`params.func`, grid,
  // block, shared memory; `params.kernelParams` packed against `layout`). Later
  // set_kernel_params calls keep them; `name` is the kernel's, for errors.
  void set_kernel_node(std::size_t index, const CUDA_KERNEL_NODE_PARAMS& params, ParamLayout layout,
                       std::string name);

  // Makes the instantiated graph run `source` instead (cuGraphExecUpdate): same topology,
  // new parameters. On failure raises ValueError naming the node that prevents it; the
  // graph is then unchanged. `owner` keeps what `source`'s nodes use alive.
  void update(CUgraph source, std::shared_ptr<void> owner);
  // Keeps `object` alive while this Graph runs what it runs now (a node's new callback): until
  // the Graph goes and its launches are done, or an update from a definition replaces it.
  void keep_alive(std::shared_ptr<void> object);
  // Enables or disables one node of the definition in this executable graph (a disabled
  // node does nothing on later launches); kernel, memset and memcpy nodes only (the driver's rule).
  void set_node_enabled(CUgraphNode node, bool enabled);
  [[nodiscard]] bool node_enabled(CUgraphNode node) const;
  // Uploads the graph's device work ahead of the first launch (cuGraphUpload).
  void upload(StreamRef stream) const;
  void debug_dot_print(const std::string& path, const GraphDebugPrintOptions& options) const;
  // Nodes and edges of the definition, as GraphTopology::to_string().
  [[nodiscard]] std::string topology() const;
  [[nodiscard]] CUgraph definition() const noexcept { return graph_; }
  [[nodiscard]] CUgraphExec exec_handle() const noexcept { return exec_.get(); }
  [[nodiscard]] const Device& device() const noexcept { return device_; }
  // What keeps the definition alive: give it to another Graph's update() with definition().
  [[nodiscard]] const std::shared_ptr<void>& definition_owner() const noexcept { return owners_.front(); }

  [[nodiscard]] std::string describe() const;

 private:
  friend class GraphDefinition;  // instantiates and updates with attachments_
  Graph(CUgraph graph, std::shared_ptr<void> owner, CUgraphExec exec, Device device);
  void read_kernel_nodes(CUgraph graph, bool keep_handles) const;
  void refuse_while_packing(const char* call) const;  // ValueError naming `call` if is_packing()
  detail::KernelNodeArgs& make_node_args(std::size_t index);
  // The one driver call of an argument update, with the graph's context made current first
  // when it is not (set_kernel_params and try_pack_kernel_params).
  void set_packed_params(std::size_t index, const CUDA_KERNEL_NODE_PARAMS& params);
  struct Release {
    bool& busy;
    ~Release() { busy = false; }
  };
  [[noreturn]] void throw_no_kernel_node(std::size_t index) const;  // ValueError: no such index
  void note_launch_stream(StreamRef stream) const;  // launch() on a stream other than the last
  CUgraph graph_ = nullptr;                    // the definition, kept alive by owners_
  std::vector<std::shared_ptr<void>> owners_;  // definitions, callbacks: freed last
  // A GraphDefinition's Graph: what its nodes use, replaced by an update from a definition
  // (shared with a user object the executable holds, so a launch in flight keeps it).
  std::shared_ptr<GraphAttachments> attachments_;
  mutable detail::LastLaunchStream last_launch_;  // the rest of the launch streams: in attachments_
  detail::UniqueHandle<CUgraphExec, detail::destroy_graph_exec> exec_;
  Device device_;
  std::shared_ptr<Context> context_;
  std::size_t node_count_ = 0;
  mutable bool kernels_read_ = false;
  mutable std::vector<GraphKernelNode> kernels_;
  // Per kernel node, made on its first try_pack_kernel_params; they point into kernels_, so
  // they go whenever kernels_ is read again.
  mutable std::vector<std::unique_ptr<detail::KernelNodeArgs>> node_args_;
};

}  // namespace nanocuda
