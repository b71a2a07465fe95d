"""cuda.core.graph's names for nanocuda's graphs, so `from cuda.core.graph import
GraphDefinition` becomes `from nanocuda.graph import GraphDefinition` and nothing else changes.

Graphs are built by stream capture (Stream.create_graph_builder / Device.create_graph_builder)
or explicitly, node by node (GraphDefinition and the GraphNode kinds); both instantiate into
a launchable Graph.
"""

from .. import _nanocuda
from .._nanocuda import Graph, GraphBuilder, GraphDebugPrintOptions


class GraphCompleteOptions(_nanocuda.GraphCompleteOptions):
    """How a graph is instantiated (cuda.core's GraphCompleteOptions): auto_free_on_launch,
    upload_stream, device_launch, use_node_priority. As in cuda.core, upload_stream is only
    checked when the options are used (instantiate / complete)."""

    def __init__(self, *, auto_free_on_launch=False, upload_stream=None, device_launch=False,
                 use_node_priority=False):
        try:
            super().__init__(auto_free_on_launch=auto_free_on_launch, upload_stream=upload_stream,
                             device_launch=device_launch, use_node_priority=use_node_priority)
            self._pending_upload = self._upload_error = None
        except TypeError as e:
            if upload_stream is None:
                raise
            # Not a stream (yet): kept as given, and the reason raised when the options are used.
            super().__init__(auto_free_on_launch=auto_free_on_launch, device_launch=device_launch,
                             use_node_priority=use_node_priority)
            self._pending_upload, self._upload_error = upload_stream, str(e)

    @property
    def upload_stream(self):
        """Stream to upload the graph on right after instantiation (None: no upload)."""
        if self._pending_upload is not None:
            return self._pending_upload
        return _nanocuda.GraphCompleteOptions.upload_stream.__get__(self)

    def __repr__(self) -> str:
        return (f"GraphCompleteOptions(auto_free_on_launch={self.auto_free_on_launch}, "
                f"upload_stream={self.upload_stream!r}, device_launch={self.device_launch}, "
                f"use_node_priority={self.use_node_priority})")


_OPTION_KEYS = ("auto_free_on_launch", "upload_stream", "device_launch", "use_node_priority")


def _complete_options(options, call: str):
    """The C++ options for `options`: None, a GraphCompleteOptions or a dict of its fields."""
    if options is None:
        return _nanocuda.GraphCompleteOptions()
    if isinstance(options, dict):
        for key in options:
            if key not in _OPTION_KEYS:
                raise TypeError(f"{call}: unknown GraphCompleteOptions field {key!r} "
                                f"(fields: {', '.join(_OPTION_KEYS)})")
        options = GraphCompleteOptions(**options)
    if not isinstance(options, _nanocuda.GraphCompleteOptions):
        raise TypeError(f"{call}: options must be a GraphCompleteOptions, a dict or None, "
                        f"got {type(options).__name__}")
    pending = getattr(options, "_pending_upload", None)
    if pending is not None:
        raise TypeError(f"{call}: GraphCompleteOptions.upload_stream must be a Stream, got "
                        f"{type(pending).__name__} ({options._upload_error})")
    return options


from ._graph_definition import GraphCondition, GraphDefinition  # noqa: E402
from ._graph_node import (  # noqa: E402
    AllocNode,
    ChildGraphNode,
    ConditionalNode,
    EmptyNode,
    EventRecordNode,
    EventWaitNode,
    FreeNode,
    GraphNode,
    GraphNodeType,
    HostCallbackNode,
    IfElseNode,
    IfNode,
    KernelNode,
    MemcpyNode,
    MemsetNode,
    SwitchNode,
    WhileNode,
)


from ._executable_node import (  # noqa: E402
    ExecutableChildGraphNode,
    ExecutableEventRecordNode,
    ExecutableEventWaitNode,
    ExecutableGraphNode,
    ExecutableHostCallbackNode,
    ExecutableKernelNode,
    ExecutableMemcpyNode,
    ExecutableMemsetNode,
    graph_getitem as _graph_getitem,
)
from ._graph_definition import _Tree  # noqa: E402


def _builder_graph_definition(builder) -> GraphDefinition:
    """GraphBuilder.graph_definition (bound in C++, made here where the class is Python)."""
    return GraphDefinition._view(_nanocuda._internal.builder_definition(builder), _Tree())


__all__ = [
    "AllocNode", "ChildGraphNode", "ConditionalNode", "EmptyNode", "EventRecordNode", "EventWaitNode",
    "ExecutableChildGraphNode", "ExecutableEventRecordNode", "ExecutableEventWaitNode", "ExecutableGraphNode",
    "ExecutableHostCallbackNode", "ExecutableKernelNode", "ExecutableMemcpyNode", "ExecutableMemsetNode",
    "FreeNode", "Graph", "GraphBuilder", "GraphCompleteOptions", "GraphCondition", "GraphDebugPrintOptions",
    "GraphDefinition", "GraphNode", "GraphNodeType", "HostCallbackNode", "IfElseNode", "IfNode",
    "KernelNode", "MemcpyNode", "MemsetNode", "SwitchNode", "WhileNode",
]
