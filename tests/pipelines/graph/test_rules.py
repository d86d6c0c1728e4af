"""The graph rules on small hand-made graphs: one bad wiring per case, and its message."""

from __future__ import annotations

import pytest

from pipelines.graph import Graph, Node, Port, Ref, check_graph


def _source() -> Node:
    return Node("Gen", {}, {"examples": "Examples"})


def _reader(wiring=None) -> Node:
    """A built-in-like node reading Gen.examples."""
    return Node(
        "Stats",
        {"examples": Port("Examples")},
        {"statistics": "ExampleStatistics"},
        wiring or {"examples": Ref("Gen", "examples")},
    )


def _step(wiring, replaces=None, outputs=None, inputs=None, unknown=()) -> Node:
    return Node(
        "Filter",
        inputs or {"examples": Port("Examples")},
        outputs if outputs is not None else {"filtered": "Examples"},
        wiring,
        custom=True,
        replaces=replaces,
        yaml_path="steps[0]",
        unknown_inputs=unknown,
    )


def _graph(*nodes: Node) -> Graph:
    return Graph({node.id: node for node in nodes})


def _only(graph: Graph, severity: str = "error"):
    return [p for p in check_graph(graph) if p.severity == severity]


def test_a_well_wired_replacing_step_passes_and_rewires_readers():
    graph = _graph(_source(), _reader(), _step({"examples": Ref("Gen", "examples")}, replaces=Ref("Gen", "examples")))
    assert check_graph(graph) == []
    assert graph.effective_wiring(graph.nodes["Stats"]) == {"examples": Ref("Filter", "filtered")}
    assert graph.topological_order() == ["Gen", "Filter", "Stats"]


def test_replacements_chain():
    second = Node(
        "Second",
        {"examples": Port("Examples")},
        {"out": "Examples"},
        {"examples": Ref("Filter", "filtered")},
        custom=True,
        replaces=Ref("Filter", "filtered"),
        yaml_path="steps[1]",
    )
    graph = _graph(_source(), _reader(), _step({"examples": Ref("Gen", "examples")}, Ref("Gen", "examples")), second)
    assert check_graph(graph) == []
    assert graph.effective_wiring(graph.nodes["Stats"]) == {"examples": Ref("Second", "out")}


@pytest.mark.parametrize(
    "node, rule, path, message",
    [
        (
            _step({"examples": Ref("Gen", "exampels")}),
            "unknown_output",
            "steps[0].inputs.examples",
            "step `Gen` has no output `exampels`. Did you mean `examples`? Expected one of: `examples`. Received: `Gen.exampels`.",
        ),
        (
            _step({"examples": Ref("Gan", "examples")}),
            "unknown_output",
            "steps[0].inputs.examples",
            "`Gan.examples` names no step `Gan`. Did you mean `Gen`?",
        ),
        (
            _step({"examples": Ref("Stats", "statistics")}),
            "type_mismatch",
            "steps[0].inputs.examples",
            "input `examples` of `Filter` takes Examples. Expected an output of type Examples. Received: "
            "`Stats.statistics` (ExampleStatistics). Wire it to one of: `Gen.examples`.",
        ),
        (
            _step({"examples": Ref("Gen", "examples")}, unknown=("exmples",)),
            "unknown_input",
            "steps[0].inputs.exmples",
            "step `Filter` has no input `exmples`. Did you mean `examples`? Expected one of: `examples`.",
        ),
        (
            _step({}),
            "missing_input",
            "steps[0].inputs",
            "step `Filter` needs input `examples` (Examples), and nothing feeds it. Add `examples: <Step>.<output>` "
            "under `inputs`. Outputs of that type: `Gen.examples`.",
        ),
        (
            _step(
                {"examples": Ref("Gen", "examples")},
                replaces=Ref("Gen", "examples"),
                outputs={"stats": "ExampleStatistics"},
            ),
            "replacement",
            "steps[0].replaces",
            "Expected exactly one output of type Examples. Received: none.",
        ),
        (
            _step(
                {"examples": Ref("Stats", "statistics")},
                inputs={"examples": Port("ExampleStatistics")},
                replaces=Ref("Gen", "examples"),
            ),
            "cycle",
            "steps[0]",
            "the steps form a cycle: Filter -> Stats -> Filter",
        ),
    ],
)
def test_bad_wiring_is_an_error_naming_the_yaml_path(node, rule, path, message):
    problems = _only(_graph(_source(), _reader(), node))
    assert [p.rule for p in problems] == [rule], problems
    assert problems[0].yaml_path == path
    assert message in problems[0].message


def test_two_steps_replacing_one_output_are_told_to_chain():
    first = _step({"examples": Ref("Gen", "examples")}, Ref("Gen", "examples"))
    second = Node(
        "Second",
        {"examples": Port("Examples")},
        {"out": "Examples"},
        {"examples": Ref("Gen", "examples")},
        custom=True,
        replaces=Ref("Gen", "examples"),
        yaml_path="steps[1]",
    )
    problems = _only(_graph(_source(), _reader(), first, second))
    assert [(p.rule, p.yaml_path) for p in problems] == [("replacement", "steps[1].replaces")]
    assert (
        "Chain them: give `Second` the input `Filter.filtered` and `replaces: Filter.filtered`." in problems[0].message
    )


def test_an_output_nobody_reads_is_a_warning_only():
    graph = _graph(_source(), _reader(), _step({"examples": Ref("Gen", "examples")}))
    assert _only(graph) == []
    (warning,) = _only(graph, "warning")
    assert warning.rule == "unused_output" and warning.yaml_path == "steps[0]"
    assert warning.message.startswith("output `Filter.filtered` is read by no step.")


def _pusher(wiring) -> Node:
    return Node(
        "MyPusher",
        {"model": Port("Model"), "model_blessing": Port("ModelBlessing", True)},
        {"pushed_model": "PushedModel"},
        wiring,
        custom=True,
        yaml_path="steps[0]",
    )


def test_a_pusher_without_a_blessing_is_an_error():
    trainer = Node("Trainer", {}, {"model": "Model"})
    evaluator = Node("Evaluator", {}, {"blessing": "ModelBlessing"})
    problems = _only(_graph(trainer, evaluator, _pusher({"model": Ref("Trainer", "model")})))
    assert [(p.rule, p.yaml_path) for p in problems] == [("pusher_gated", "steps[0].inputs")]
    assert problems[0].message.endswith("Add `model_blessing: Evaluator.blessing` under `inputs`.")
    gated = _pusher({"model": Ref("Trainer", "model"), "model_blessing": Ref("Evaluator", "blessing")})
    assert _only(_graph(trainer, evaluator, gated)) == []


def _plain(node_id: str, *reads: str) -> Node:
    return Node(node_id, {r: Port("Examples") for r in reads}, {"out": "Examples"}, {r: Ref(r, "out") for r in reads})


def test_topological_order_keeps_declaration_order_where_the_wiring_allows():
    graph = _graph(_plain("A"), _plain("B", "A"), _plain("C", "A"), _plain("D", "B", "C"))
    assert graph.topological_order() == ["A", "B", "C", "D"]

    late_producer = _graph(_plain("Reader", "Gen"), _plain("Other"), _plain("Gen"))
    assert late_producer.topological_order() == ["Other", "Gen", "Reader"]


def test_find_cycle_names_the_cycle_producers_first():
    graph = _graph(_plain("A", "C"), _plain("B", "A"), _plain("C", "B"), _plain("D", "C"))
    cycle = graph.find_cycle()
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["A", "B", "C"]
    assert all(producer in graph.upstream(graph.nodes[reader]) for producer, reader in zip(cycle, cycle[1:]))
    assert _graph(_plain("Self", "Self")).find_cycle() == ["Self", "Self"]
    assert _graph(_plain("A"), _plain("B", "A")).find_cycle() is None
