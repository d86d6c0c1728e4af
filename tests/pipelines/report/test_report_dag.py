"""The DAG's layered layout: a component sits one layer right of its deepest input."""

from __future__ import annotations

import graphlib

import pytest

from pipelines.report.dag import BOX_HEIGHT, BOX_WIDTH, layout

DIAMOND = {"B": ["A"], "C": ["A"], "D": ["B", "C"]}


def test_components_are_layered_by_their_longest_path_from_a_source():
    drawn = layout(["A", "B", "C", "D", "E"], {**DIAMOND, "E": ["A", "D"]}, {}, {})
    x = {node.id: node.x for node in drawn.nodes}
    assert x["A"] < x["B"] == x["C"] < x["D"] < x["E"]
    y = {node.id: node.y for node in drawn.nodes}
    assert y["B"] != y["C"] and y["A"] == y["B"]
    assert drawn.width >= x["E"] + BOX_WIDTH and drawn.height >= max(y.values()) + BOX_HEIGHT


def test_each_dependency_is_one_edge_from_the_upstream_box_to_the_downstream_box():
    drawn = layout(["A", "B", "C", "D"], DIAMOND, {}, {})
    nodes = {node.id: node for node in drawn.nodes}
    assert len(drawn.edges) == 4
    assert (nodes["A"].x + BOX_WIDTH, nodes["A"].y + BOX_HEIGHT / 2, nodes["B"].x, nodes["B"].y + BOX_HEIGHT / 2) in (
        drawn.edges
    )


def test_status_and_seconds_come_from_the_run_and_the_rest_did_not_run():
    drawn = layout(["A", "B", "C", "D"], DIAMOND, {"A": "cached", "B": "failed"}, {"A": 0.5, "B": 2.0})
    assert [(n.id, n.status, n.seconds) for n in drawn.nodes] == [
        ("A", "cached", 0.5),
        ("B", "failed", 2.0),
        ("C", "not run", None),
        ("D", "not run", None),
    ]


def test_a_cycle_is_refused():
    with pytest.raises(graphlib.CycleError):
        layout(["A", "B"], {"A": ["B"], "B": ["A"]}, {}, {})
