"""Compile time: builds the custom steps' TFX components and splices them into the pipeline.

The compiler builds the built-in components as always; `add_custom_steps`
then creates each custom step (producers first) from its wired inputs and
YAML parameters, and points every built-in input that reads a replaced
output at the replacing step's output.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from pipelines.graph import GraphError, GraphProblem
from pipelines.spec.models import PipelineSpec
from pipelines.steps.plan import ResolvedStep, plan_steps

__all__ = ["add_custom_steps", "instantiate"]


def _parameter_value(tp: Any, value: Any) -> Any:
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def instantiate(step: ResolvedStep, inputs: dict[str, Any]):
    """Creates the TFX component of one custom step, with id = the step's name.

    `@component` functions and `BaseComponent` subclasses whose constructor
    takes their inputs and parameters by name are called with them; a
    subclass that keeps `BaseComponent.__init__(spec)` gets its spec built here.
    """
    from tfx.dsl.components.base.base_component import BaseComponent
    from tfx.types import Channel

    cls = step.component
    parameters = {
        name: _parameter_value(step.signature.parameters[name].type, value)
        for name, value in step.spec.parameters.items()
    }
    if cls.__init__ is BaseComponent.__init__:
        outputs = {name: Channel(type=p.type) for name, p in cls.SPEC_CLASS.OUTPUTS.items()}
        component = cls(spec=cls.SPEC_CLASS(**inputs, **parameters, **outputs))
    else:
        accepted = inspect.signature(cls.__init__).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        missing = [n for n in [*inputs, *parameters] if n not in accepted and not takes_any]
        if missing:
            raise TypeError(
                f"`{step.target}`'s constructor does not take {', '.join(f'`{n}`' for n in missing)}. Expected a "
                "constructor taking every input and parameter of its SPEC_CLASS by name. Add them to `__init__`."
            )
        component = cls(**inputs, **parameters)
    return component.with_id(step.spec.name)


def add_custom_steps(spec: PipelineSpec, components: list) -> list:
    """Returns `components` plus the spec's custom steps, with built-in inputs rewired.

    Raises:
        GraphError: the steps break a graph rule (a checked spec never does).
    """
    if not spec.steps:
        return components
    plan = plan_steps(spec)
    if plan.problems or plan.graph is None:
        raise GraphError([GraphProblem("spec", "error", message, path, path) for path, message in plan.problems])
    for warning in plan.warnings:
        logging.warning("%s", warning)
    graph = plan.graph
    by_id = {component.id: component for component in components}
    steps = {step.spec.name: step for step in plan.steps}
    for node_id in graph.topological_order():
        if node_id in by_id:
            continue
        node = graph.nodes[node_id]
        inputs = {name: by_id[ref.step].outputs[ref.output] for name, ref in node.wiring.items()}
        by_id[node_id] = instantiate(steps[node_id], inputs)
    for node in graph.nodes.values():
        if node.custom or node.id not in by_id:
            continue
        for name, ref in graph.effective_wiring(node).items():
            if ref != node.wiring[name]:
                by_id[node.id].inputs[name] = by_id[ref.step].outputs[ref.output]
    return [*components, *(by_id[name] for name in steps)]
