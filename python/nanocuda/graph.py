"""cuda.core.graph's names for nanocuda's captured graphs, so `from cuda.core.graph import
GraphBuilder` becomes `from nanocuda.graph import GraphBuilder` and nothing else changes.

Graphs are built by stream capture (Stream.create_graph_builder / Device.create_graph_builder);
the explicit node classes of cuda.core.graph are not offered (docs/cuda-core.md says why).
"""

from ._nanocuda import ConditionalHandle, Graph, GraphBuilder, GraphCompleteOptions, GraphDebugPrintOptions

# cuda.core's name for what GraphBuilder.create_condition returns.
GraphCondition = ConditionalHandle

__all__ = ["Graph", "GraphBuilder", "GraphCompleteOptions", "GraphCondition", "GraphDebugPrintOptions"]
