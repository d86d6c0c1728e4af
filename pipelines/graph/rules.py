"""Named checks over the step graph, each with a fix-it message.

Add a rule by writing `def rule_x(graph) -> Iterator[GraphProblem]` and
listing it in `GRAPH_RULES`. Errors stop the pipeline before anything runs;
warnings are printed and the run goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Literal, Optional

from pipelines.graph.model import Graph, Node, Ref
from pipelines.spec.errors import did_you_mean

__all__ = ["GraphProblem", "GraphError", "GRAPH_RULES", "check_graph"]

BLESSING_TYPE = "ModelBlessing"
PUSHED_TYPE = "PushedModel"


@dataclasses.dataclass(frozen=True)
class GraphProblem:
    """One finding: which rule, how bad, where in the spec (custom steps), and what to do."""

    rule: str
    severity: Literal["error", "warning"]
    message: str
    node: str
    yaml_path: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.yaml_path or self.node}: {self.message}"


class GraphError(ValueError):
    """The step graph breaks one or more rules; `problems` lists them."""

    def __init__(self, problems: list[GraphProblem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _path(node: Node, *parts: str) -> Optional[str]:
    if node.yaml_path is None:
        return None
    return ".".join([node.yaml_path, *parts])


def _error(rule: str, node: Node, message: str, *parts: str) -> GraphProblem:
    return GraphProblem(rule, "error", message, node.id, _path(node, *parts))


def _outputs_of_type(graph: Graph, type_name: str, exclude: str = "") -> list[str]:
    return [
        f"`{node.id}.{name}`"
        for node in graph.nodes.values()
        if node.id != exclude
        for name, output_type in node.outputs.items()
        if output_type == type_name
    ]


def _type_of(graph: Graph, ref: Ref) -> Optional[str]:
    node = graph.nodes.get(ref.step)
    return node.outputs.get(ref.output) if node else None


def rule_unknown_input(graph: Graph) -> Iterator[GraphProblem]:
    for node in graph.nodes.values():
        for name in node.unknown_inputs:
            known = ", ".join(f"`{k}`" for k in node.inputs) or "none"
            yield _error(
                "unknown_input",
                node,
                f"step `{node.id}` has no input `{name}`.{did_you_mean(name, node.inputs)} "
                f"Expected one of: {known}. Rename or remove it.",
                "inputs",
                name,
            )


def rule_missing_input(graph: Graph) -> Iterator[GraphProblem]:
    for node in graph.nodes.values():
        for name, port in node.inputs.items():
            if port.optional or name in node.wiring:
                continue
            candidates = _outputs_of_type(graph, port.type_name, exclude=node.id)
            example = f" Outputs of that type: {', '.join(candidates)}." if candidates else ""
            yield _error(
                "missing_input",
                node,
                f"step `{node.id}` needs input `{name}` ({port.type_name}), and nothing feeds it. "
                f"Add `{name}: <Step>.<output>` under `inputs`.{example}",
                "inputs",
            )


def _check_ref(graph: Graph, node: Node, ref: Ref, *parts: str) -> Iterator[GraphProblem]:
    source = graph.nodes.get(ref.step)
    if source is None:
        steps = ", ".join(f"`{s}`" for s in graph.nodes)
        yield _error(
            "unknown_output",
            node,
            f"`{ref}` names no step `{ref.step}`.{did_you_mean(ref.step, graph.nodes)} Expected one of: {steps}.",
            *parts,
        )
    elif ref.output not in source.outputs:
        outputs = ", ".join(f"`{o}`" for o in source.outputs) or "none"
        yield _error(
            "unknown_output",
            node,
            f"step `{ref.step}` has no output `{ref.output}`.{did_you_mean(ref.output, source.outputs)} "
            f"Expected one of: {outputs}. Received: `{ref}`.",
            *parts,
        )


def rule_unknown_output(graph: Graph) -> Iterator[GraphProblem]:
    for node in graph.nodes.values():
        for name, ref in node.wiring.items():
            yield from _check_ref(graph, node, ref, "inputs", name)
        if node.replaces is not None:
            yield from _check_ref(graph, node, node.replaces, "replaces")


def rule_type_mismatch(graph: Graph) -> Iterator[GraphProblem]:
    for node in graph.nodes.values():
        for name, ref in graph.effective_wiring(node).items():
            port = node.inputs.get(name)
            produced = _type_of(graph, ref)
            if port is None or produced is None or produced == port.type_name:
                continue
            candidates = _outputs_of_type(graph, port.type_name, exclude=node.id)
            fix = f"Wire it to one of: {', '.join(candidates)}." if candidates else "No step produces that type."
            yield _error(
                "type_mismatch",
                node,
                f"input `{name}` of `{node.id}` takes {port.type_name}. Expected an output of type "
                f"{port.type_name}. Received: `{ref}` ({produced}). {fix}",
                "inputs",
                name,
            )


def rule_replacement(graph: Graph) -> Iterator[GraphProblem]:
    """A replacing step has exactly one output of the replaced type, and only one step replaces an output."""
    claimed: dict[Ref, str] = {}
    for node in graph.nodes.values():
        ref = node.replaces
        replaced_type = _type_of(graph, ref) if ref else None
        if ref is None or replaced_type is None:
            continue
        names = node.output_of_type(replaced_type)
        if len(names) != 1:
            received = ", ".join(f"`{n}`" for n in names) if names else "none"
            yield _error(
                "replacement",
                node,
                f"step `{node.id}` replaces `{ref}` ({replaced_type}). Expected exactly one output of type "
                f"{replaced_type}. Received: {received}. Replace an output of another type, or change the component.",
                "replaces",
            )
        if ref in claimed:
            first = graph.nodes[claimed[ref]]
            yield _error(
                "replacement",
                node,
                f"steps `{first.id}` and `{node.id}` both replace `{ref}`. Expected one step per output. "
                f"Chain them: give `{node.id}` the input `{first.id}.{first.output_of_type(replaced_type)[0]}` "
                f"and `replaces: {first.id}.{first.output_of_type(replaced_type)[0]}`.",
                "replaces",
            )
        else:
            claimed[ref] = node.id


def rule_cycles(graph: Graph) -> Iterator[GraphProblem]:
    cycle = graph.find_cycle()
    if cycle:
        custom = next((graph.nodes[n] for n in cycle if graph.nodes[n].custom), graph.nodes[cycle[0]])
        start = cycle.index(custom.id)
        cycle = cycle[start:-1] + cycle[:start] + [custom.id]  # read from the custom step on
        yield _error(
            "cycle",
            custom,
            f"the steps form a cycle: {' -> '.join(cycle)}. Expected each step to read only outputs of steps "
            f"that run before it. Wire `{custom.id}` to an earlier step's output (or drop its `replaces`).",
        )


def rule_unused_outputs(graph: Graph) -> Iterator[GraphProblem]:
    """A warning: a custom step's output nobody reads is usually a wiring slip."""
    read = {ref for node in graph.nodes.values() for ref in graph.effective_wiring(node).values()}
    for node in graph.nodes.values():
        if not node.custom:
            continue
        for name in node.outputs:
            if Ref(node.id, name) not in read:
                yield GraphProblem(
                    "unused_output",
                    "warning",
                    f"output `{node.id}.{name}` is read by no step. Wire it into a step's `inputs`, add "
                    f"`replaces` so built-in steps read it, or ignore this if the step runs for its side effects.",
                    node.id,
                    node.yaml_path,
                )


def rule_pusher_gated(graph: Graph) -> Iterator[GraphProblem]:
    """Whatever pushes a model reads a blessing: no unvalidated model reaches serving."""
    for node in graph.nodes.values():
        if PUSHED_TYPE not in node.outputs.values():
            continue
        wiring = graph.effective_wiring(node)
        gated = any(
            port.type_name == BLESSING_TYPE and name in wiring and _type_of(graph, wiring[name]) == BLESSING_TYPE
            for name, port in node.inputs.items()
        )
        if gated:
            continue
        blessing_inputs = [name for name, port in node.inputs.items() if port.type_name == BLESSING_TYPE]
        fix = (
            f"Add `{blessing_inputs[0]}: Evaluator.blessing` under `inputs`."
            if blessing_inputs
            else "Use a pusher that takes a `model_blessing` input, and wire it to `Evaluator.blessing`."
        )
        yield _error(
            "pusher_gated",
            node,
            f"step `{node.id}` pushes models without a blessing. Expected an input of type {BLESSING_TYPE} "
            f"read from an Evaluator. Received: none. {fix}",
            "inputs" if blessing_inputs else "uses",
        )


GRAPH_RULES: list[Callable[[Graph], Iterator[GraphProblem]]] = [
    rule_unknown_input,
    rule_missing_input,
    rule_unknown_output,
    rule_type_mismatch,
    rule_replacement,
    rule_cycles,
    rule_unused_outputs,
    rule_pusher_gated,
]


def check_graph(graph: Graph) -> list[GraphProblem]:
    """Runs every rule; returns errors and warnings in rule order."""
    problems: list[GraphProblem] = []
    for rule in GRAPH_RULES:
        problems.extend(rule(graph))
    return problems
