"""GraphNode and its kinds (cuda.core's names): typed views of one node of a GraphDefinition."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from .._nanocuda import _internal
from ._adjacency_set_proxy import AdjacencySetProxy
from ._checks import items

__all__ = [
    "AllocNode", "ChildGraphNode", "ConditionalNode", "EmptyNode", "EventRecordNode",
    "EventWaitNode", "FreeNode", "GraphNode", "GraphNodeType", "HostCallbackNode", "IfElseNode",
    "IfNode", "KernelNode", "MemcpyNode", "MemsetNode", "SwitchNode", "WhileNode",
]

_KERNEL_EXTRAS = {"kernel": 0, "args": 1, "config": 2}  # a kernel node's extras tuple


class GraphNodeType(enum.IntEnum):
    """The driver's CUgraphNodeType, with its names (what GraphNode.type returns)."""

    CU_GRAPH_NODE_TYPE_KERNEL = 0
    CU_GRAPH_NODE_TYPE_MEMCPY = 1
    CU_GRAPH_NODE_TYPE_MEMSET = 2
    CU_GRAPH_NODE_TYPE_HOST = 3
    CU_GRAPH_NODE_TYPE_GRAPH = 4
    CU_GRAPH_NODE_TYPE_EMPTY = 5
    CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6
    CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7
    CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8
    CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT = 9
    CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10
    CU_GRAPH_NODE_TYPE_MEM_FREE = 11
    CU_GRAPH_NODE_TYPE_BATCH_MEM_OP = 12
    CU_GRAPH_NODE_TYPE_CONDITIONAL = 13


class GraphNode:
    """A node of a GraphDefinition. Builder methods on a node add a node that depends on it;
    the definition's own builder methods add entry nodes (no dependencies)."""

    __slots__ = ("_graph", "_handle", "_valid", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("GraphNode cannot be created directly; use GraphDefinition's builder methods")

    @classmethod
    def _make(cls, graph, handle):
        node = object.__new__(cls)
        node._graph, node._handle, node._valid = graph, handle, True
        return node

    def _checked(self) -> int:
        if not self.is_valid:  # a freed driver handle is never used
            raise ValueError(f"{type(self).__name__}: the node was destroyed (or the graph holding it)")
        if self._handle is None:
            raise ValueError("the entry node of a GraphDefinition has no edges")
        return self._handle

    def _deps(self) -> list[int]:
        if not self.is_valid:
            raise ValueError(f"{type(self).__name__}: the node was destroyed (or the graph holding it)")
        return [] if self._handle is None else [self._handle]

    def _extra(self, key, default=None):
        e = self._graph._tree.extras.get(self._handle)
        if type(e) is tuple:  # a kernel node's (kernel, args, config): one tuple, not a dict, a node
            return e[_KERNEL_EXTRAS[key]] if key in _KERNEL_EXTRAS else default
        return default if e is None else e.get(key, default)

    def _record(self) -> dict:
        return self._graph._core.record(self._handle) or {}

    def __repr__(self) -> str:
        if self._handle is None:
            return "<GraphNode entry>"
        return f"<{type(self).__name__} handle=0x{self._handle:x}{self._repr_extra() if self.is_valid else ' destroyed'}>"

    def _repr_extra(self) -> str:
        return ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphNode):
            return NotImplemented
        return self._handle == other._handle and self._graph == other._graph

    def __hash__(self) -> int:
        return hash((GraphNode, self._graph._key, self._handle))

    def __reduce__(self):
        raise TypeError(f"{type(self).__name__} cannot be pickled (it views a live CUDA graph)")

    @property
    def type(self) -> GraphNodeType | None:
        """The node's CUgraphNodeType (GraphNodeType), or None for the entry node."""
        if self._handle is None or not self.is_valid:  # the entry node; a destroyed node
            return None
        return GraphNodeType(self._graph._core.node_type(self._handle))

    @property
    def graph(self):
        """The GraphDefinition this node belongs to."""
        return self._graph

    @property
    def handle(self) -> int | None:
        """The CUgraphNode handle as an int (None for the entry node and a destroyed node)."""
        return self._handle if self.is_valid else None

    @property
    def is_valid(self) -> bool:
        """False after destroy(), or once the graph it is in went with its owning node."""
        return self._valid and self._graph._core.is_valid

    def destroy(self) -> None:
        """Remove this node and its edges from the graph; later calls do nothing."""
        if not self.is_valid or self._handle is None:
            return
        gone = self._graph._core.destroy_node(self._handle)  # a refusal (CudaError) leaves it valid
        self._valid = False
        _internal.graph_nodes_destroyed()  # graph[node] views' cached node indexes expire
        for h in gone:  # what they were built with goes with them (callbacks, kernels, bodies)
            self._graph._tree.extras.pop(h, None)
        nodes = self._graph._tree.nodes  # the tree's node objects (_graph_definition._Tree)
        ref = nodes.get(self._handle)
        if ref is not None and ref() is self:
            del nodes[self._handle]

    @property
    def pred(self) -> AdjacencySetProxy:
        """A mutable set view of this node's predecessors."""
        return AdjacencySetProxy(self, succ=False)

    @pred.setter
    def pred(self, value: Iterable[GraphNode]) -> None:
        new = items(value, "GraphNode.pred", "the new pred")  # first: `node.pred |= s` assigns this node's own view back
        proxy = self.pred
        proxy.clear()
        for n in new:
            proxy.add(n)

    @property
    def succ(self) -> AdjacencySetProxy:
        """A mutable set view of this node's successors."""
        return AdjacencySetProxy(self, succ=True)

    @succ.setter
    def succ(self, value: Iterable[GraphNode]) -> None:
        new = items(value, "GraphNode.succ", "the new succ")  # first: `node.succ |= s` assigns this node's own view back
        proxy = self.succ
        proxy.clear()
        for n in new:
            proxy.add(n)

    # Builder methods: each adds a node after this one (see GraphDefinition's for the entry form).
    def launch(self, config, kernel, *args):
        """Add a kernel node running `kernel` with `config` and `args` (checked as a launch's)."""
        return self._graph._launch(self._deps(), config, kernel, args)

    def join(self, *nodes: GraphNode):
        """Add an empty node after this node and `nodes`."""
        return self._graph._join([self, *nodes])

    def allocate(self, size: int, *, device=None, memory_type="device", peer_access=None):
        """Add a memory-allocation node of `size` bytes; its address is the node's dptr."""
        return self._graph._allocate(self._deps(), size, device, memory_type, peer_access)

    def deallocate(self, dptr: int):
        """Add a node freeing a graph allocation."""
        return self._graph._deallocate(self._deps(), dptr)

    def memset(self, dst, value, width: int, height: int = 1, pitch: int = 0, *, dst_owner=None):
        """Add a memset node: `value` (an int byte, or 1, 2 or 4 bytes) over width x height elements."""
        return self._graph._memset(self._deps(), dst, value, width, height, pitch, dst_owner)

    def memcpy(self, dst, src, size: int, *, dst_owner=None, src_owner=None):
        """Add a node copying `size` bytes from `src` to `dst`."""
        return self._graph._memcpy(self._deps(), dst, src, size, dst_owner, src_owner)

    def embed(self, child):
        """Add a child-graph node holding a copy of the GraphDefinition `child`."""
        return self._graph._embed(self._deps(), child)

    def record(self, event):
        """Add a node recording `event`."""
        return self._graph._event(self._deps(), event, record=True)

    def wait(self, event):
        """Add a node waiting for `event`."""
        return self._graph._event(self._deps(), event, record=False)

    def callback(self, fn, *, user_data=None):
        """Add a host node calling `fn` (a Python callable, or a ctypes void(void*) function
        pointer with optional `user_data`)."""
        return self._graph._callback(self._deps(), fn, user_data)

    def if_then(self, condition):
        """Add an if node; fill its body through .then."""
        return self._graph._conditional(self._deps(), condition, "if", 1, "if_then")

    def if_else(self, condition):
        """Add an if/else node; fill .then and .else_."""
        return self._graph._conditional(self._deps(), condition, "if", 2, "if_else")

    def while_loop(self, condition):
        """Add a while node; fill its body through .body."""
        return self._graph._conditional(self._deps(), condition, "while", 1, "while_loop")

    def switch(self, condition, count: int):
        """Add a switch node with `count` branches (.branches)."""
        return self._graph._conditional(self._deps(), condition, "switch", count, "switch")


class EmptyNode(GraphNode):
    """An empty node: orders the nodes before it before the nodes after it."""
    __slots__ = ()


class KernelNode(GraphNode):
    """A kernel launch node."""

    __slots__ = ()
    _repr_extra = lambda self: f" kernel=0x{int(getattr(self.kernel, 'handle', 0) or 0):x}"  # noqa: E731

    @property
    def grid(self) -> tuple[int, int, int]:
        """Grid dimensions (x, y, z)."""
        return tuple(self._record().get("grid", (0, 0, 0)))

    @property
    def block(self) -> tuple[int, int, int]:
        """Block dimensions (x, y, z)."""
        return tuple(self._record().get("block", (0, 0, 0)))

    @property
    def shmem_size(self) -> int:
        """Dynamic shared memory, bytes."""
        return self._record().get("shmem_size", 0)

    @property
    def kernel(self):
        """The Kernel this node runs."""
        return self._extra("kernel")

    @property
    def config(self):
        """The LaunchConfig the node was built (or last updated) with; for a captured node, one
        made from its grid, block and shared memory."""
        from .._nanocuda import LaunchConfig

        given = self._extra("config")
        if given is not None:
            return given
        return LaunchConfig(grid=self.grid, block=self.block, shmem_size=self.shmem_size)

    def update(self, *, config=None, kernel=None, args=None) -> None:
        """Replace the configuration, kernel and/or arguments (a new kernel needs `args`)."""
        if kernel is not None and args is None:
            raise ValueError("KernelNode.update: changing the kernel needs args (args=() for none)")
        if args is None:
            args = self._extra("args")
            if args is None:
                raise ValueError("KernelNode.update: the node's arguments are unknown; pass args")
        self._graph._set_kernel(self, config or self.config, kernel or self.kernel, tuple(items(args, "KernelNode.update", "args")))


class AllocNode(GraphNode):
    """A memory-allocation node; the allocation's address is fixed for the graph's life."""

    __slots__ = ()
    _repr_extra = lambda self: f" dptr=0x{self.dptr:x} size={self.bytesize}"  # noqa: E731

    dptr = property(lambda self: self._record().get("dptr", 0), doc="The allocation's address.")
    bytesize = property(lambda self: self._record().get("bytesize", 0), doc="Its size, bytes.")
    device_id = property(lambda self: self._record().get("device_id", 0), doc="Its device.")
    memory_type = property(lambda self: self._record().get("memory_type", "device"),
                           doc="'device', 'host' or 'managed'.")
    peer_access = property(lambda self: tuple(self._record().get("peer_access", ())),
                           doc="Devices given read-write access.")


class FreeNode(GraphNode):
    """A memory-free node."""

    __slots__ = ()
    _repr_extra = lambda self: f" dptr=0x{self.dptr:x}"  # noqa: E731

    dptr = property(lambda self: self._record().get("dptr", 0), doc="The address freed.")


class MemsetNode(GraphNode):
    """A memset node."""

    __slots__ = ()
    _repr_extra = lambda self: f" dptr=0x{self.dptr:x} value={self.value}"  # noqa: E731

    dptr = property(lambda self: self._record().get("dptr", 0), doc="The destination.")
    value = property(lambda self: self._record().get("value", 0), doc="The fill value.")
    element_size = property(lambda self: self._record().get("element_size", 1), doc="1, 2 or 4 bytes.")
    width = property(lambda self: self._record().get("width", 0), doc="Elements a row.")
    height = property(lambda self: self._record().get("height", 1), doc="Rows.")
    pitch = property(lambda self: self._record().get("pitch", 0), doc="Bytes between rows.")

    def update(self, *, dst=None, value=None, width=None, height=None, pitch=None, dst_owner=None) -> None:
        """Replace selected parameters; omitted ones keep their values."""
        self._graph._set_memset(self, dst, value, width, height, pitch, dst_owner)


class MemcpyNode(GraphNode):
    """A 1-D memcpy node."""

    __slots__ = ()
    _repr_extra = lambda self: f" dst=0x{self.dst:x}(D) src=0x{self.src:x}(D) size={self.size}"  # noqa: E731

    dst = property(lambda self: self._record().get("dst", 0), doc="The destination.")
    src = property(lambda self: self._record().get("src", 0), doc="The source.")
    size = property(lambda self: self._record().get("size", 0), doc="Bytes copied.")

    def update(self, *, dst=None, src=None, size=None, dst_owner=None, src_owner=None) -> None:
        """Replace selected parameters; omitted ones keep their values."""
        self._graph._set_memcpy(self, dst, src, size, dst_owner, src_owner)


class ChildGraphNode(GraphNode):
    """A node running a copy of another GraphDefinition."""

    __slots__ = ()
    _repr_extra = lambda self: f" child=0x{self.child_graph.handle:x}"  # noqa: E731

    @property
    def child_graph(self):
        """The embedded graph (a view of the node's copy)."""
        return self._graph._child_view(self._checked())

    def update(self, child) -> None:
        """Run a copy of the GraphDefinition `child` instead (another tree than this node's)."""
        self._graph._set_child(self, child, None)


class EventRecordNode(GraphNode):
    """A node recording an event."""

    __slots__ = ()
    _repr_extra = lambda self: f" event=0x{int(self.event.handle or 0):x}"  # noqa: E731

    event = property(lambda self: self._extra("event"), doc="The event recorded.")

    def update(self, event) -> None:
        """Record `event` instead."""
        self._graph._set_event(self, event)


class EventWaitNode(GraphNode):
    """A node waiting for an event."""

    __slots__ = ()
    _repr_extra = lambda self: f" event=0x{int(self.event.handle or 0):x}"  # noqa: E731

    event = property(lambda self: self._extra("event"), doc="The event waited for.")

    def update(self, event) -> None:
        """Wait for `event` instead."""
        self._graph._set_event(self, event)


class HostCallbackNode(GraphNode):
    """A node calling a host function."""

    __slots__ = ()
    _repr_extra = lambda self: f" callback={getattr(self.callback, '__name__', 'cfunc')}"  # noqa: E731

    callback = property(lambda self: self._extra("callback"),
                        doc="The Python callable (None for a ctypes function pointer).")

    def update(self, fn, *, user_data=None) -> None:
        """Call `fn` (same forms as GraphNode.callback) instead."""
        self._graph._set_callback(self, fn, user_data)


class ConditionalNode(GraphNode):
    """A conditional node (if, if/else, while, switch) with body graphs."""

    __slots__ = ()
    _repr_extra = lambda self: f" condition=0x{int(self.condition or 0):x}"  # noqa: E731

    @property
    def condition(self):
        """The GraphCondition driving it."""
        return self._extra("condition")

    @property
    def cond_type(self):
        """GraphConditionalType.IF, WHILE or SWITCH."""
        from ..typing import GraphConditionalType

        t = self._record().get("cond_type")
        return None if t is None else GraphConditionalType(t)

    @property
    def branches(self) -> tuple:
        """The body graphs, as GraphDefinitions."""
        if not self.is_valid:
            self._checked()  # says the node was destroyed (.then would be an IndexError)
        return tuple(type(self._graph)._view(b, self._graph._tree) for b in self._extra("bodies", ()))


class IfNode(ConditionalNode):
    """An if node."""

    __slots__ = ()
    then = property(lambda self: self.branches[0], doc="The body run when the condition is non-zero.")


class IfElseNode(ConditionalNode):
    """An if/else node."""

    __slots__ = ()
    then = property(lambda self: self.branches[0], doc="The body run when the condition is non-zero.")
    else_ = property(lambda self: self.branches[1], doc="The body run when it is zero.")


class WhileNode(ConditionalNode):
    """A while node."""

    __slots__ = ()
    body = property(lambda self: self.branches[0], doc="The body run while the condition is non-zero.")


class SwitchNode(ConditionalNode):
    """A switch node: branch n runs when the condition is n."""

    __slots__ = ()


# Node class for a CUgraphNodeType (conditional nodes: by how they were built).
_CLASS_OF_TYPE = {
    0: KernelNode, 1: MemcpyNode, 2: MemsetNode, 3: HostCallbackNode, 4: ChildGraphNode, 5: EmptyNode,
    6: EventWaitNode, 7: EventRecordNode, 10: AllocNode, 11: FreeNode, 13: ConditionalNode,
}
