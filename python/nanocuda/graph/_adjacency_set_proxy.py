"""The live, editable pred/succ sets of a GraphNode (cuda.core's AdjacencySetProxy)."""

from __future__ import annotations

from collections.abc import MutableSet

__all__ = ["AdjacencySetProxy"]


class AdjacencySetProxy(MutableSet):
    """A live, mutable set view of a node's predecessors or successors: adding or removing a
    node adds or removes the edge in the graph."""

    def __init__(self, node: GraphNode, succ: bool):
        self._node, self._succ = node, succ

    def _edge(self, other: GraphNode) -> tuple[int, int]:
        if not _is_node(other):
            side = "succ" if self._succ else "pred"  # the edge set of node.succ / node.pred
            raise TypeError(f"GraphNode.{side}: expected a GraphNode, got {type(other).__name__}")
        # A destroyed node's stale handle goes to the core, which refuses it (CudaError) as
        # the driver does; only the entry node, which has no handle, is refused here.
        a, b = self._node._handle, other._handle
        if a is None or b is None:
            raise ValueError("the entry node of a GraphDefinition has no edges")
        return (a, b) if self._succ else (b, a)

    def _handles(self) -> list[int]:
        h = self._node._handle
        if h is None or not self._node.is_valid:
            return []
        edges = self._node._graph._core.edges()
        return [b for a, b in edges if a == h] if self._succ else [a for a, b in edges if b == h]

    def __contains__(self, other) -> bool:
        return _is_node(other) and other.is_valid and other._graph == self._node._graph and other._handle in self._handles()

    def __iter__(self):
        g = self._node._graph
        return iter([g._node(h) for h in self._handles()])

    def __len__(self) -> int:
        return len(self._handles())

    def add(self, other: GraphNode) -> None:
        """Add the edge to (or from) `other`; nothing if it is there already."""
        if other not in self:
            a, b = self._edge(other)
            self._node._graph._core.connect(a, b, "GraphNode.succ.add" if self._succ else "GraphNode.pred.add")

    def discard(self, other: GraphNode) -> None:
        """Remove the edge to (or from) `other` if there is one."""
        if other in self:
            a, b = self._edge(other)
            self._node._graph._core.disconnect(a, b, "GraphNode.succ.discard" if self._succ else "GraphNode.pred.discard")

    @classmethod
    def _from_iterable(cls, it) -> set:
        # The results of &, |, - and ^ are plain sets of nodes, not views (MutableSet would
        # call cls(it), which needs a node).
        return set(it)

    __repr__ = lambda self: "{" + ", ".join(repr(n) for n in self) + "}"  # noqa: E731


def _is_node(obj) -> bool:
    from ._graph_node import GraphNode

    return isinstance(obj, GraphNode)
