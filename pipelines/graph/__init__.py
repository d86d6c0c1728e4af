"""The pipeline as a graph of steps and typed ports, and the rules it must pass.

Built before any TFX object exists, from the spec and the components'
signatures, so that a miswired pipeline fails with a fix-it message naming
the YAML line instead of a TFX stack trace.
"""

from pipelines.graph.model import Graph, Node, Port, Ref
from pipelines.graph.rules import GRAPH_RULES, GraphError, GraphProblem, check_graph

__all__ = ["Graph", "Node", "Port", "Ref", "GRAPH_RULES", "GraphProblem", "GraphError", "check_graph"]
