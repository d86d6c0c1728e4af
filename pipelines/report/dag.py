"""The run's DAG laid out in layers (left to right), for the report to draw as inline SVG.

A component's layer is the length of the longest path to it from a component with no inputs
(graphlib orders them); within a layer, components keep the compiled pipeline's order.
"""

from __future__ import annotations

import dataclasses
import graphlib
from collections.abc import Mapping, Sequence

__all__ = ["DagNode", "DagLayout", "layout", "BOX_WIDTH", "BOX_HEIGHT"]

BOX_WIDTH = 136
BOX_HEIGHT = 46
_GAP_X = 26
_GAP_Y = 18
_MARGIN = 8


@dataclasses.dataclass
class DagNode:
    """One component: its status (`executed`, `cached`, `failed`, `not run`...), seconds, and box position."""

    id: str
    status: str
    seconds: float | None
    x: float
    y: float


@dataclasses.dataclass
class DagLayout:
    nodes: list[DagNode]
    edges: list[tuple[float, float, float, float]]  # (x1, y1, x2, y2): upstream's right to downstream's left
    width: float
    height: float


def layout(
    order: Sequence[str],
    upstream: Mapping[str, Sequence[str]],
    status: Mapping[str, str],
    seconds: Mapping[str, float],
) -> DagLayout:
    """Positions every component in layers by dependency depth.

    Args:
        order: component ids in the compiled pipeline's order.
        upstream: component id -> the ids it depends on.
        status: component id -> status; components missing here are `not run`.
        seconds: component id -> duration.

    Returns:
        Boxes and edges in SVG user units, with the drawing's size.

    Raises:
        graphlib.CycleError: the dependencies have a cycle (a compiled TFX pipeline never does).
    """
    depth: dict[str, int] = {}
    for node in graphlib.TopologicalSorter({n: set(upstream.get(n, ())) for n in order}).static_order():
        depth[node] = max((depth[u] + 1 for u in upstream.get(node, ()) if u in depth), default=0)
    layers: dict[int, list[str]] = {}
    for node in order:
        layers.setdefault(depth[node], []).append(node)
    nodes: dict[str, DagNode] = {}
    for layer, members in layers.items():
        for row, node in enumerate(members):
            nodes[node] = DagNode(
                node,
                status.get(node, "not run"),
                seconds.get(node),
                _MARGIN + layer * (BOX_WIDTH + _GAP_X),
                _MARGIN + row * (BOX_HEIGHT + _GAP_Y),
            )
    edges = [
        (
            nodes[u].x + BOX_WIDTH,
            nodes[u].y + BOX_HEIGHT / 2,
            nodes[n].x,
            nodes[n].y + BOX_HEIGHT / 2,
        )
        for n in order
        for u in upstream.get(n, ())
        if u in nodes
    ]
    width = 2 * _MARGIN + max(layers, default=0) * (BOX_WIDTH + _GAP_X) + BOX_WIDTH
    height = 2 * _MARGIN + max((len(m) for m in layers.values()), default=1) * (BOX_HEIGHT + _GAP_Y) - _GAP_Y
    return DagLayout([nodes[n] for n in order], edges, width, height)
