"""From the spec's `steps:` to resolved components and a checked step graph.

`plan_steps` imports each step's component, checks names and parameters
against its signature, builds the graph (built-in steps plus custom ones)
and runs the graph rules. Every problem carries the YAML path to report;
the spec rules and the compiler both start from here.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pipelines.builtins import builtin_nodes
from pipelines.graph import Graph, GraphProblem, Node, check_graph
from pipelines.graph.model import parse_ref
from pipelines.spec.errors import did_you_mean
from pipelines.spec.models import PipelineSpec, StepSpec
from pipelines.steps.registry import COMPONENT_GROUP, UnresolvedReference, resolve
from pipelines.steps.signature import ComponentSignature, NotAComponent, check_value, signature_of

__all__ = ["ResolvedStep", "StepPlan", "plan_steps"]

_STEP_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclasses.dataclass(frozen=True)
class ResolvedStep:
    spec: StepSpec
    path: str
    component: Any
    target: str
    signature: ComponentSignature


@dataclasses.dataclass
class StepPlan:
    """Resolved steps, the graph, and `(yaml path, message)` problems; warnings do not stop a run."""

    steps: list[ResolvedStep]
    graph: Graph | None
    problems: list[tuple[str, str]]
    warnings: list[GraphProblem] = dataclasses.field(default_factory=list)


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}` (true/false)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if value is None:
        return "nothing (null)"
    return f"`{value}` ({type(value).__name__})"


def _check_name(step: StepSpec, path: str, taken: set[str]) -> list[tuple[str, str]]:
    if not _STEP_NAME.match(step.name):
        return [
            (
                f"{path}.name",
                f"`{step.name}` is not a usable step name. Use letters, digits and `_`, starting with a letter, e.g. `DropShortTrips`.",
            )
        ]
    if step.name in taken:
        return [
            (
                f"{path}.name",
                f"step name `{step.name}` is already taken (built-in steps and earlier steps). Expected a unique name. Rename it, e.g. `My{step.name}`.",
            )
        ]
    return []


def _check_parameters(step: StepSpec, path: str, signature: ComponentSignature) -> list[tuple[str, str]]:
    problems = []
    declared = signature.parameters
    for name, value in step.parameters.items():
        where = f"{path}.parameters.{name}"
        if name not in declared:
            known = ", ".join(f"`{k}`" for k in declared) or "none"
            problems.append(
                (
                    where,
                    f"step `{step.name}` (`{step.uses}`) has no parameter `{name}`.{did_you_mean(name, declared)} Expected one of: {known}. Rename or remove it.",
                )
            )
            continue
        expected = check_value(declared[name].type, value)
        if expected is not None:
            problems.append(
                (
                    where,
                    f"parameter `{name}` of step `{step.name}` has the wrong type. Expected {expected}. Received: {_describe(value)}. Fix the value.",
                )
            )
    for name, info in declared.items():
        if not info.optional and name not in step.parameters:
            problems.append(
                (
                    f"{path}.parameters",
                    f"step `{step.name}` needs parameter `{name}` ({info.type_text}). Add `{name}: <value>` under `parameters`.",
                )
            )
    return problems


def _node(step: ResolvedStep) -> tuple[Node, list[tuple[str, str]]]:
    problems, wiring, unknown = [], {}, []
    for name, text in step.spec.inputs.items():
        ref = parse_ref(text)
        if ref is None:
            problems.append(
                (
                    f"{step.path}.inputs.{name}",
                    f"expected `Step.output`, e.g. `ExampleGen.examples`. Received: {_describe(text)}. Fix the reference.",
                )
            )
        elif name in step.signature.inputs:
            wiring[name] = ref
        else:
            unknown.append(name)
    replaces = None
    if step.spec.replaces is not None:
        replaces = parse_ref(step.spec.replaces)
        if replaces is None:
            problems.append(
                (
                    f"{step.path}.replaces",
                    f"expected `Step.output`, e.g. `ExampleGen.examples`. Received: {_describe(step.spec.replaces)}. Fix the reference.",
                )
            )
    node = Node(
        step.spec.name,
        dict(step.signature.inputs),
        dict(step.signature.outputs),
        wiring,
        custom=True,
        replaces=replaces,
        yaml_path=step.path,
        unknown_inputs=tuple(unknown),
    )
    return node, problems


def plan_steps(spec: PipelineSpec) -> StepPlan:
    """Resolves and checks the spec's custom steps; see the module docstring."""
    nodes = builtin_nodes(spec)
    taken = set(nodes)
    problems: list[tuple[str, str]] = []
    steps: list[ResolvedStep] = []
    for index, step in enumerate(spec.steps):
        path = f"steps[{index}]"
        problems.extend(_check_name(step, path, taken))
        taken.add(step.name)
        try:
            component, target = resolve(step.uses, COMPONENT_GROUP)
            signature = signature_of(component, step.uses)
        except (UnresolvedReference, NotAComponent) as err:
            problems.append((f"{path}.uses", str(err)))
            continue
        problems.extend(_check_parameters(step, path, signature))
        steps.append(ResolvedStep(step, path, component, target, signature))
    if len(steps) < len(spec.steps):  # an unresolved step would make every reference to it look wrong
        return StepPlan(steps, None, problems)
    for step in steps:
        node, node_problems = _node(step)
        problems.extend(node_problems)
        nodes[node.id] = node
    graph = Graph(nodes)
    if problems:
        return StepPlan(steps, graph, problems)
    found = check_graph(graph)
    errors = [(p.yaml_path or p.node, p.message) for p in found if p.severity == "error"]
    return StepPlan(steps, graph, errors, [p for p in found if p.severity == "warning"])
