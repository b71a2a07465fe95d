"""GraphDefinition (cuda.core's name): an explicit CUDA graph, built node by node over the C++
core's nanocuda._nanocuda._internal.GraphDef; the node kinds are in _graph_node.py."""

from __future__ import annotations

import abc
import ctypes
import weakref

from .._nanocuda import (
    ConditionalHandle,
    Device,
    Event,
    GraphCompleteOptions,
    GraphDebugPrintOptions,
    Kernel,
    LaunchConfig,
)
from .._nanocuda import _internal
from ._checks import ordinal, ordinals, path_arg
from ._graph_node import (
    _CLASS_OF_TYPE, AllocNode, ChildGraphNode, ConditionalNode, EmptyNode, EventRecordNode, EventWaitNode,
    FreeNode, GraphNode, HostCallbackNode, IfElseNode, IfNode, KernelNode, MemcpyNode, MemsetNode,
    SwitchNode, WhileNode,
)

_new_object, _weakref = object.__new__, weakref.ref
_NO_DEPS: list[int] = []  # an entry node's dependencies (the core only reads them)

__all__ = ["GraphCondition", "GraphDefinition"]


class GraphCondition(metaclass=abc.ABCMeta):
    """A condition for conditional nodes (cuda.core's GraphCondition), from
    GraphDefinition.create_condition(); device code sets its value. Pass it to a kernel as an
    argument (it converts to its 64-bit handle). GraphBuilder's handles count as one too."""

    __slots__ = ("_handle", "_tree_id", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("GraphCondition cannot be created directly; use create_condition()")

    @classmethod
    def _make(cls, handle: int, tree_id: int) -> GraphCondition:
        c = object.__new__(cls)
        c._handle, c._tree_id = handle, tree_id
        return c

    @property
    def handle(self) -> int:
        """The CUgraphConditionalHandle value as an int."""
        return self._handle

    def __index__(self) -> int:
        return self._handle

    __int__ = __index__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphCondition) or isinstance(other, int):
            return NotImplemented
        return self._handle == other._handle and self._tree_id == other._tree_id

    def __hash__(self) -> int:
        return hash((GraphCondition, self._tree_id, self._handle))

    def __repr__(self) -> str:
        return f"<GraphCondition handle=0x{self._handle:x}>"

    def __reduce__(self):
        raise TypeError("GraphCondition cannot be pickled (it belongs to a live CUDA graph)")


GraphCondition.register(ConditionalHandle)  # what GraphBuilder.create_condition returns
_MEMORY_TYPES = ("device", "host", "managed")
_CONDITIONAL_CLASS = {"if_then": IfNode, "if_else": IfElseNode, "while_loop": WhileNode, "switch": SwitchNode}


class _Tree:
    """What the definitions viewing one graph tree share: per-node Python extras (the kernel,
    args and config as a tuple, the event or callable, conditional bodies) nodes give back, and
    the node objects handed out (handle -> weak reference), so nodes(), edges(), pred and succ
    give back the objects the builder methods returned. Plain weak references, no callbacks:
    a dead one is replaced on the next lookup, and all go with the tree (GraphNode.destroy()
    drops its own)."""

    __slots__ = ("extras", "nodes", "__weakref__")

    def __init__(self):
        self.extras: dict[int, dict | tuple] = {}
        self.nodes: dict[int, weakref.ref] = {}


def _is_buffer(obj) -> bool:
    t = type(obj)  # on the type: a closed Buffer's .handle raises
    return hasattr(t, "is_closed") and hasattr(t, "handle") and hasattr(t, "size")


def _address(obj, call: str, what: str) -> int:
    """A device address from a Buffer (its .handle) or an int."""
    if isinstance(obj, bool):
        raise TypeError(f"{call}: {what} must be a Buffer or an int address, got bool")
    if isinstance(obj, int):
        return obj
    if _is_buffer(obj):
        if obj.is_closed:
            raise ValueError(f"{call}: {what} Buffer has no active allocation (it was closed)")
        return int(obj.handle)
    raise TypeError(f"{call}: {what} must be a Buffer or an int address, got {type(obj).__name__}")


def _operand(obj, owner, call: str, what: str) -> tuple[int, object]:
    """(address, what the graph must keep alive) for a Buffer or a raw address with an owner."""
    ptr = _address(obj, call, what)
    if owner is None:
        return ptr, (None if isinstance(obj, int) else obj)
    if not isinstance(obj, int):
        raise ValueError(f"{call}: {what}_owner cannot be used when {what} is a Buffer (the Buffer is retained)")
    if _is_buffer(owner) and owner.is_closed:
        raise ValueError(f"{call}: {what}_owner Buffer has no active allocation (it was closed)")
    return ptr, owner


def _memset_value(value, call: str) -> tuple[int, int]:
    """(value, element size) from an int byte or a 1-, 2- or 4-byte buffer."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < 256:
            raise ValueError(f"{call}: an int value must be in [0, 256), got {value}")
        return value, 1
    try:
        data = bytes(memoryview(value))
    except TypeError:
        raise TypeError(f"{call}: value must be an int or a buffer of 1, 2 or 4 bytes, got "
                        f"{type(value).__name__}") from None
    if len(data) not in (1, 2, 4):
        raise ValueError(f"{call}: a buffer value must be 1, 2 or 4 bytes, got {len(data)}")
    return int.from_bytes(data, "little"), len(data)


def _host_fn_parts(fn, user_data, call: str):
    """None for a Python callable; (CUhostFn address, data address, what to keep alive) for a
    ctypes CFUNCTYPE(None, c_void_p) function with `user_data` (bytes are copied). Also used by
    GraphBuilder.callback (python/ext), so both graph kinds follow one rule."""
    if isinstance(fn, ctypes._CFuncPtr):
        if fn.restype is not None or tuple(fn.argtypes or ()) != (ctypes.c_void_p,):
            raise TypeError(f"{call}: a ctypes callback must be CFUNCTYPE(None, c_void_p) (CUhostFn)")
        if user_data is None:
            data, keep = 0, fn
        elif isinstance(user_data, int) and not isinstance(user_data, bool):
            data, keep = user_data, fn
        else:
            buf = ctypes.create_string_buffer(bytes(memoryview(user_data)))
            data, keep = ctypes.addressof(buf), (fn, buf)
        return ctypes.cast(fn, ctypes.c_void_p).value, data, keep
    if not callable(fn):
        raise TypeError(f"{call}: fn must be a callable or a ctypes function pointer, got {type(fn).__name__}")
    if user_data is not None:
        raise ValueError(f"{call}: user_data is only supported with ctypes function pointers; "
                         "a Python callable can close over its data")
    return None


class GraphDefinition:
    """A CUDA graph built explicitly (cuda.core's GraphDefinition): add nodes with the builder
    methods (here: entry nodes; on a node: nodes after it), edit edges through node.pred /
    node.succ, then instantiate() a launchable Graph. Views of child and conditional-body
    graphs share the tree's state; mutations of one tree must not race.

        g = GraphDefinition()
        a = g.allocate(4096)
        k = a.launch(LaunchConfig(grid=1, block=256), kernel, a.dptr)
        graph = g.instantiate()
    """

    __slots__ = ("_core", "_tree", "_key", "__weakref__")

    def __init__(self):
        self._core = _internal.GraphDef.create(Device())
        self._tree = _Tree()
        self._key = self._core.handle  # equality and hash survive the graph's destruction

    @classmethod
    def _view(cls, core, tree: _Tree) -> GraphDefinition:
        g = object.__new__(cls)
        g._core, g._tree, g._key = core, tree, core.handle
        return g

    def __repr__(self) -> str:
        return f"<GraphDefinition handle=0x{self._core.handle:x}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphDefinition):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash((GraphDefinition, self._key))

    def __reduce__(self):
        raise TypeError("GraphDefinition cannot be pickled (it owns a live CUDA graph)")

    @property
    def is_valid(self) -> bool:
        """False once the node owning this graph (a conditional body, an embedded child graph)
        was destroyed; the graph went with it."""
        return self._core.is_valid

    @property
    def handle(self) -> int:
        """The CUgraph handle as an int (0 once the graph was destroyed with its owning node)."""
        return self._core.handle

    @property
    def _entry(self) -> GraphNode:
        """The virtual entry node: builder methods on it add nodes with no dependencies."""
        return GraphNode._make(self, None)  # not cached: it would make a cycle with self

    # -- nodes -------------------------------------------------------------------------------
    def _node(self, handle: int, cls=None) -> GraphNode:
        ref = self._tree.nodes.get(handle)
        node = ref() if ref is not None else None
        if node is not None and node._valid:
            return node
        if cls is None:
            cls = _CLASS_OF_TYPE.get(self._core.node_type(handle), GraphNode)
            if cls is ConditionalNode:
                kind = self._tree.extras.get(handle, {}).get("kind")
                cls = _CONDITIONAL_CLASS.get(kind, ConditionalNode)
        node = cls._make(self, handle)
        self._tree.nodes[handle] = weakref.ref(node)
        return node

    def _new(self, handle: int, cls, **extras) -> GraphNode:
        if extras:
            self._tree.extras[handle] = extras
        node = cls._make(self, handle)  # a new handle: nothing to look up
        self._tree.nodes[handle] = weakref.ref(node)
        return node

    def nodes(self) -> set[GraphNode]:
        """All nodes of this graph."""
        return {self._node(h) for h in self._core.nodes()}

    def edges(self) -> set[tuple[GraphNode, GraphNode]]:
        """All edges, as (from, to) node pairs."""
        return {(self._node(a), self._node(b)) for a, b in self._core.edges()}

    # -- builders (entry nodes here; GraphNode's methods call these with their handle) --------
    def _launch(self, deps, config, kernel, args):
        # Per node: one C++ call (it packs the arguments, adds the node and keeps the kernel
        # alive once per graph), the node's extras and its object; no driver user object.
        if type(config) is not LaunchConfig and not isinstance(config, LaunchConfig):
            raise TypeError(f"GraphDefinition.launch: config must be a LaunchConfig, got {type(config).__name__}")
        if type(kernel) is not Kernel and not isinstance(kernel, Kernel):
            raise TypeError(f"GraphDefinition.launch: kernel must be a Kernel, got {type(kernel).__name__}")
        h = self._core.add_kernel(deps, config, kernel, args)
        tree = self._tree
        tree.extras[h] = (kernel, args, config)  # GraphNode._extra reads it
        node = _new_object(KernelNode)  # KernelNode._make, inlined (a thousand-node build)
        node._graph, node._handle, node._valid = self, h, True
        tree.nodes[h] = _weakref(node)
        return node

    def launch(self, config, kernel, *args):
        """Add an entry kernel node (no dependencies); see GraphNode.launch."""
        # _launch_entry, below: the extension's launch does this for exact LaunchConfig and
        # Kernel arguments; here the rest. _launch inlined; the core's add checks the graph.
        if type(config) is not LaunchConfig and not isinstance(config, LaunchConfig):
            raise TypeError(f"GraphDefinition.launch: config must be a LaunchConfig, got {type(config).__name__}")
        if type(kernel) is not Kernel and not isinstance(kernel, Kernel):
            raise TypeError(f"GraphDefinition.launch: kernel must be a Kernel, got {type(kernel).__name__}")
        core = self._core
        try:
            h = core.add_kernel(_NO_DEPS, config, kernel, args)
        except ValueError:
            if not core.is_valid:  # as the entry node says it
                raise ValueError("GraphNode: the node was destroyed (or the graph holding it)") from None
            raise
        tree = self._tree
        tree.extras[h] = (kernel, args, config)  # GraphNode._extra reads it
        node = _new_object(KernelNode)
        node._graph, node._handle, node._valid = self, h, True
        tree.nodes[h] = _weakref(node)
        return node

    def _join(self, nodes):
        deps = []
        for n in nodes:
            if not isinstance(n, GraphNode):
                raise TypeError(f"GraphDefinition.join: expected GraphNodes, got {type(n).__name__}")
            deps += n._deps()
        return self._new(self._core.add_empty(deps), EmptyNode)

    def _allocate(self, deps, size, device, memory_type, peer_access):
        mt = str(getattr(memory_type, "value", memory_type))
        if mt not in _MEMORY_TYPES:
            raise ValueError(f"'{memory_type}' is not a valid GraphMemoryType. Must be one of: "
                             + ", ".join(repr(t) for t in _MEMORY_TYPES))
        dev = self._core.device.device_id if device is None else ordinal(device, "GraphDefinition.allocate", "device")
        peers = ordinals(peer_access or (), "GraphDefinition.allocate", "peer_access")
        return self._new(self._core.add_alloc(deps, size, dev, mt, peers), AllocNode)

    def _deallocate(self, deps, dptr):
        return self._new(self._core.add_free(deps, _address(dptr, "GraphDefinition.deallocate", "dptr")), FreeNode)

    def _memset(self, deps, dst, value, width, height, pitch, dst_owner):
        call = "GraphDefinition.memset"
        ptr, keep = _operand(dst, dst_owner, call, "dst")
        v, size = _memset_value(value, call)
        h = self._core.add_memset(deps, ptr, v, size, width, height, pitch)
        self._keep(keep, h)
        return self._new(h, MemsetNode)

    def _memcpy(self, deps, dst, src, size, dst_owner, src_owner):
        call = "GraphDefinition.memcpy"
        (d, dkeep), (sp, skeep) = _operand(dst, dst_owner, call, "dst"), _operand(src, src_owner, call, "src")
        h = self._core.add_memcpy(deps, d, sp, size)
        self._keep(dkeep, h)
        self._keep(skeep, h)
        return self._new(h, MemcpyNode)

    def _keep(self, obj, node: int) -> None:
        if obj is not None:
            self._core.keep_alive(obj, node)

    def _embed(self, deps, child):
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"GraphDefinition.embed: child must be a GraphDefinition, got {type(child).__name__}")
        return self._new(self._core.add_child(deps, child._core), ChildGraphNode)

    def _child_view(self, handle: int) -> GraphDefinition:
        return GraphDefinition._view(self._core.child_graph(handle), self._tree)

    def _event(self, deps, event, record: bool):
        call = "GraphDefinition.record" if record else "GraphDefinition.wait"
        if not isinstance(event, Event):
            raise TypeError(f"{call}: event must be an Event, got {type(event).__name__}")
        h = self._core.add_event_record(deps, event) if record else self._core.add_event_wait(deps, event)
        self._core.keep_alive(event, h)
        return self._new(h, EventRecordNode if record else EventWaitNode, event=event)

    def _callback(self, deps, fn, user_data):
        raw = _host_fn_parts(fn, user_data, "GraphDefinition.callback")
        if raw is None:
            return self._new(self._core.add_callback(deps, fn), HostCallbackNode, callback=fn)
        return self._new(self._core.add_cfunc(deps, *raw), HostCallbackNode, callback=None)

    def _conditional(self, deps, condition, kind, size, method):
        call = f"GraphDefinition.{method}"
        if not isinstance(condition, GraphCondition):
            raise TypeError(f"{call}: condition must be a GraphCondition (from create_condition()), "
                            f"got {type(condition).__name__}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"{call}: count must be a non-negative int, got {size!r}")
        h, bodies = self._core.add_conditional(deps, int(condition), kind, size)
        # The bodies' cores, not views: a view holds the tree, which would make a cycle.
        return self._new(h, _CONDITIONAL_CLASS[method], kind=method, condition=condition, bodies=tuple(bodies))

    def create_condition(self, default_value: int | None = None) -> GraphCondition:
        """A condition for this graph's conditional nodes; device code sets it."""
        if default_value is not None and (isinstance(default_value, bool) or not isinstance(default_value, int)):
            raise TypeError(f"GraphDefinition.create_condition: default_value must be an int or None, "
                            f"got {type(default_value).__name__}")
        return GraphCondition._make(self._core.create_condition(default_value), self._core.tree_id)

    # -- updates (called by the node classes) ------------------------------------------------
    def _set_kernel(self, node, config, kernel, args):
        self._core.set_kernel(node._checked(), config, kernel, args)
        self._core.keep_alive(kernel, node._handle)
        self._tree.extras[node._handle] = (kernel, args, config)

    def _set_memset(self, node, dst, value, width, height, pitch, dst_owner):
        call = "MemsetNode.update"
        r = self._core.record(node._checked()) or {}
        ptr, keep = (r.get("dptr", 0), None) if dst is None else _operand(dst, dst_owner, call, "dst")
        v, size = (r.get("value", 0), r.get("element_size", 1)) if value is None else _memset_value(value, call)
        self._core.set_memset(node._handle, ptr, v, size, r.get("width", 0) if width is None else width,
                              r.get("height", 1) if height is None else height,
                              r.get("pitch", 0) if pitch is None else pitch)
        self._keep(keep, node._handle)

    def _set_memcpy(self, node, dst, src, size, dst_owner, src_owner):
        call = "MemcpyNode.update"
        r = self._core.record(node._checked()) or {}
        d, dkeep = (r.get("dst", 0), None) if dst is None else _operand(dst, dst_owner, call, "dst")
        sp, skeep = (r.get("src", 0), None) if src is None else _operand(src, src_owner, call, "src")
        self._core.set_memcpy(node._handle, d, sp, r.get("size", 0) if size is None else size)
        self._keep(dkeep, node._handle)
        self._keep(skeep, node._handle)

    def _set_child(self, node, child, graph):
        call = "ChildGraphNode.update" if graph is None else "ExecutableChildGraphNode.update"
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"{call}: child must be a GraphDefinition, got {type(child).__name__}")
        if child._tree is self._tree:
            raise ValueError(f"{call}: child must belong to another graph tree than the node")
        self._core.set_child(node._checked(), child._core, graph)

    def _set_event(self, node, event):
        if not isinstance(event, Event):
            raise TypeError(f"{type(node).__name__}.update: event must be an Event, got {type(event).__name__}")
        self._core.set_event(node._checked(), event)
        self._core.keep_alive(event, node._handle)
        self._tree.extras.setdefault(node._handle, {})["event"] = event

    def _set_callback(self, node, fn, user_data):
        raw = _host_fn_parts(fn, user_data, "HostCallbackNode.update")
        if raw is not None:
            raise TypeError("HostCallbackNode.update: ctypes function pointers are not supported here; "
                            "use a Python callable")
        self._core.set_callback(node._checked(), fn)
        self._tree.extras.setdefault(node._handle, {})["callback"] = fn

    # -- whole graph -------------------------------------------------------------------------
    def instantiate(self, options: GraphCompleteOptions | None = None):
        """Instantiate into a launchable nanocuda.Graph (options: GraphCompleteOptions)."""
        from . import _complete_options

        return self._core.instantiate(_complete_options(options, "GraphDefinition.instantiate"))

    def debug_dot_print(self, path: str, options: GraphDebugPrintOptions | None = None) -> None:
        """Write the graph as GraphViz DOT to `path`."""
        if options is not None and not isinstance(options, GraphDebugPrintOptions):
            raise TypeError(f"GraphDefinition.debug_dot_print: options must be a GraphDebugPrintOptions "
                            f"or None, got {type(options).__name__}")
        path = path_arg(path, "GraphDefinition.debug_dot_print")  # str() of any object was a file name
        self._core.debug_dot_print(path, GraphDebugPrintOptions() if options is None else options)


# Each builder method of GraphDefinition adds an entry node: the entry node's method.
for _name in ("join", "allocate", "deallocate", "memset", "memcpy", "embed", "record", "wait",
              "callback", "if_then", "if_else", "while_loop", "switch"):
    def _entry_method(self, *args, _name=_name, **kwargs):
        return getattr(self._entry, _name)(*args, **kwargs)

    _entry_method.__name__, _entry_method.__qualname__ = _name, f"GraphDefinition.{_name}"
    _entry_method.__doc__ = f"Add an entry node (no dependencies); see GraphNode.{_name}."
    setattr(GraphDefinition, _name, _entry_method)
del _name, _entry_method


def empty(self) -> GraphNode:
    """Add an entry empty node."""
    return self._join([])


GraphDefinition.empty = empty
GraphDefinition._launch_entry = GraphDefinition.launch
_internal.install_definition_launch(GraphDefinition, KernelNode, _Tree)  # a METH_FASTCALL launch
del empty
