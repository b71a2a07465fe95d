"""graph[node]: views of one node of an executable Graph (cuda.core's Executable*Node) whose
update() changes that node for later launches of this Graph only, not its definition."""

from __future__ import annotations

from .._nanocuda import _internal
from ._graph_node import (
    ChildGraphNode,
    EventRecordNode,
    EventWaitNode,
    GraphNode,
    HostCallbackNode,
    KernelNode,
    MemcpyNode,
    MemsetNode,
)

__all__ = [
    "ExecutableChildGraphNode", "ExecutableEventRecordNode", "ExecutableEventWaitNode", "ExecutableGraphNode",
    "ExecutableHostCallbackNode", "ExecutableKernelNode", "ExecutableMemcpyNode", "ExecutableMemsetNode",
]


class ExecutableGraphNode:
    """A node of an executable Graph, as `graph[node]` gives it."""

    __slots__ = ("_exec", "_node")

    def __init__(self, *args, **kwargs):
        raise TypeError("ExecutableGraphNode cannot be created directly; use graph[node]")

    @classmethod
    def _make(cls, graph, node):
        view = object.__new__(cls)
        view._exec, view._node = graph, node
        return view

    @property
    def node(self) -> GraphNode:
        """The definition node this view edits."""
        return self._node

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._node!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExecutableGraphNode):
            return NotImplemented
        return self._exec is other._exec and self._node == other._node

    def __hash__(self) -> int:
        return hash((ExecutableGraphNode, id(self._exec), self._node))

    def _core(self):
        return self._node._graph._core


class _Switchable(ExecutableGraphNode):
    """Kernel, memset and memcpy nodes can be disabled (they then do nothing when launched)."""

    __slots__ = ()

    @property
    def is_enabled(self) -> bool:
        """Whether the node runs when the graph is launched."""
        return _internal.graph_exec_get_enabled(self._exec, self._node._checked())

    def enable(self) -> None:
        """Run the node again on later launches."""
        _internal.graph_exec_set_enabled(self._exec, self._node._checked(), True)

    def disable(self) -> None:
        """Skip the node on later launches."""
        _internal.graph_exec_set_enabled(self._exec, self._node._checked(), False)


class ExecutableKernelNode(_Switchable):
    """A kernel node of an executable Graph."""

    __slots__ = ("_index", "_stamp")  # the node's kernel-node index in the Graph, cached by update()

    def update(self, *, config=None, kernel=None, args=None) -> None:
        """New configuration, kernel and arguments for this Graph's launches (args checked as a launch's).
        Replaced at import by a C method (python/ext/launch/bind_graph_exec_node.cpp) that does
        args-only updates itself and calls _update for the rest."""
        self._update(config=config, kernel=kernel, args=args)

    def _update(self, *, config=None, kernel=None, args=None) -> None:
        n = self._node
        if args is None:
            raise ValueError("ExecutableKernelNode.update: args are required (args=() for none)")
        if not isinstance(args, (tuple, list)):
            try:
                args = tuple(args)
            except TypeError:
                raise TypeError("ExecutableKernelNode.update: args must be a tuple or list of the kernel's "
                                f"arguments, got {type(args).__name__}") from None
        handle = n._checked()
        if config is None and kernel is None:  # the node keeps its kernel and configuration here
            _internal.graph_exec_update_args(self._exec, handle, tuple(args))
            return
        _internal.graph_exec_set_kernel(self._exec, handle, config or n.config, kernel or n.kernel, tuple(args))


class ExecutableMemsetNode(_Switchable):
    """A memset node of an executable Graph."""

    __slots__ = ()

    def update(self, *, dst, value, width: int, height: int = 1, pitch: int = 0) -> None:
        """New destination, value and extent for this Graph's launches."""
        from ._graph_definition import _address, _memset_value

        call = "ExecutableMemsetNode.update"
        v, size = _memset_value(value, call)
        self._core().set_memset(self._node._checked(), _address(dst, call, "dst"), v, size, width, height,
                                pitch, self._exec)


class ExecutableMemcpyNode(_Switchable):
    """A memcpy node of an executable Graph."""

    __slots__ = ()

    def update(self, *, dst, src, size: int) -> None:
        """New destination, source and size for this Graph's launches."""
        from ._graph_definition import _address

        call = "ExecutableMemcpyNode.update"
        self._core().set_memcpy(self._node._checked(), _address(dst, call, "dst"), _address(src, call, "src"),
                                size, self._exec)


class ExecutableEventRecordNode(ExecutableGraphNode):
    """An event-record node of an executable Graph."""

    __slots__ = ()

    def update(self, event) -> None:
        """Record `event` on this Graph's launches."""
        self._core().set_event(self._node._checked(), event, self._exec)
        self._core().keep_alive(event)


class ExecutableEventWaitNode(ExecutableEventRecordNode):
    """An event-wait node of an executable Graph."""

    __slots__ = ()

    def update(self, event) -> None:
        """Wait for `event` on this Graph's launches."""
        super().update(event)


class ExecutableHostCallbackNode(ExecutableGraphNode):
    """A host-callback node of an executable Graph."""

    __slots__ = ()

    def update(self, fn, *, user_data=None) -> None:
        """Call the Python callable `fn` on this Graph's launches."""
        if user_data is not None or not callable(fn):
            raise TypeError("ExecutableHostCallbackNode.update: fn must be a Python callable (no user_data)")
        self._core().set_callback(self._node._checked(), fn, self._exec)


class ExecutableChildGraphNode(ExecutableGraphNode):
    """A child-graph node of an executable Graph."""

    __slots__ = ()

    def update(self, child) -> None:
        """Run a copy of `child` (same shape as the embedded graph) on this Graph's launches."""
        self._node._graph._set_child(self._node, child, self._exec)


from ._graph_definition import GraphDefinition  # noqa: E402

# Python's own errors from _update (a positional argument, an unknown keyword) name update().
ExecutableKernelNode._update.__name__ = "update"
ExecutableKernelNode._update.__qualname__ = "ExecutableKernelNode.update"
_internal.install_exec_kernel_update(ExecutableKernelNode, GraphNode, GraphDefinition)

_VIEW_OF = {
    KernelNode: ExecutableKernelNode, MemsetNode: ExecutableMemsetNode, MemcpyNode: ExecutableMemcpyNode,
    EventRecordNode: ExecutableEventRecordNode, EventWaitNode: ExecutableEventWaitNode,
    HostCallbackNode: ExecutableHostCallbackNode, ChildGraphNode: ExecutableChildGraphNode,
}


def graph_getitem(graph, node) -> ExecutableGraphNode:
    """Graph.__getitem__: the view of definition node `node` in `graph`."""
    if not isinstance(node, GraphNode):
        raise TypeError(f"Graph[node]: node must be a GraphNode of the definition the graph was "
                        f"instantiated from, got {type(node).__name__}")
    node._checked()
    return _VIEW_OF.get(type(node), ExecutableGraphNode)._make(graph, node)
