"""The built-in components, in pipeline order: the one table every part of the project reads.

Each module here declares one built-in (`BUILTIN`, a `record.Builtin`): its
ports, the spec sections that configure it, its wiring as a function of the
spec, the nodes it waits for and the factory that builds its TFX component.
The compiler builds the pipeline by walking `BUILTINS`; the step graph
(`steps.plan`, `python -m pipelines components`), the Airflow target's task
dependencies, the report and the spec rules read the same records.

Adding a built-in: write its module here (a `BUILTIN` record whose factory
imports TFX inside) and add it to `BUILTINS` at its place in the order.
Reading the table imports no TFX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.builtins import (
    analyzer_cache_resolver,
    baseline_resolver,
    bulk_inferrer,
    data_gate,
    deployer,
    evaluator,
    example_gen,
    example_validator,
    previous_span_resolver,
    pusher,
    schema_gen,
    statistics_gen,
    trainer,
    transform,
    tuner,
    warm_start_resolver,
)
from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Node

if TYPE_CHECKING:
    from pipelines.spec.models import PipelineSpec

__all__ = [
    "BUILTINS",
    "BY_ID",
    "COMPONENT_ORDER",
    "Builtin",
    "Compilation",
    "builtin_nodes",
    "control_edges",
    "enabled_builtins",
    "DATA_GATE",
]

BUILTINS: tuple[Builtin, ...] = (
    example_gen.BUILTIN,
    warm_start_resolver.BUILTIN,  # no inputs: TFX orders it first among the nodes without upstream
    analyzer_cache_resolver.BUILTIN,  # after ExampleGen: TFX orders the nodes of one depth by id
    statistics_gen.BUILTIN,
    previous_span_resolver.BUILTIN,
    schema_gen.BUILTIN,
    example_validator.BUILTIN,
    data_gate.BUILTIN,
    transform.BUILTIN,
    tuner.BUILTIN,
    trainer.BUILTIN,
    baseline_resolver.BUILTIN,
    evaluator.BUILTIN,
    pusher.BUILTIN,
    deployer.BUILTIN,
    bulk_inferrer.BUILTIN,
)

BY_ID: dict[str, Builtin] = {builtin.id: builtin for builtin in BUILTINS}
# Every built-in's id, in pipeline order (also those a spec leaves out, such as the Deployer).
COMPONENT_ORDER: tuple[str, ...] = tuple(BY_ID)
# The built-in that stops a run on bad data: the report says whether the run got past it.
DATA_GATE: str = next(builtin.id for builtin in BUILTINS if builtin.gates_data)


def enabled_builtins(spec: PipelineSpec) -> list[Builtin]:
    """The built-ins `spec` compiles to, in pipeline order."""
    return [builtin for builtin in BUILTINS if builtin.enabled(spec)]


def builtin_nodes(spec: PipelineSpec) -> dict[str, Node]:
    """The built-in steps this spec compiles to, as graph nodes."""
    return {builtin.id: builtin.node(spec) for builtin in enabled_builtins(spec)}


def control_edges(spec: PipelineSpec) -> dict[str, frozenset[str]]:
    """node -> the nodes it runs after without reading their outputs, among those `spec` has."""
    present = {builtin.id for builtin in enabled_builtins(spec)}
    return {
        builtin.id: frozenset(builtin.waits_for) & present
        for builtin in enabled_builtins(spec)
        if set(builtin.waits_for) & present
    }
