"""The record a built-in component declares once, and what its factory is given.

A `Builtin` says everything the project needs to know about one built-in
node: its id and place in the pipeline, the spec sections that configure
it, its ports, how its inputs are wired for a spec, whether a spec has it,
the nodes it waits for without reading their outputs, and the factory that
builds its TFX component. The compiler, the step graph, the targets, the
report and the rules all read these records (`pipelines.builtins.BUILTINS`),
so none of them restates the wiring. This module imports no TFX: `validate`
and `components` read the records without it; a factory imports TFX inside.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pipelines.graph.model import Node, Port, Ref

if TYPE_CHECKING:  # annotations only: `pipelines.spec` loads its rules, which read this table
    from pipelines.spec.models import PipelineSpec
    from pipelines.spec.resolved import ResolvedSpec

__all__ = ["Builtin", "Compilation", "always"]


def always(spec: PipelineSpec) -> bool:
    """`Builtin.enabled` for a node every spec has."""
    return True


def _none(spec: PipelineSpec) -> tuple[str, ...]:
    return ()


@dataclasses.dataclass(frozen=True)
class Compilation:
    """What a factory builds from: the checked spec and its Transform/Trainer configuration.

    `config` is `pipelines.builtins.transform.transform_config(resolved)`,
    computed once per compilation (it reads the label's classes).
    """

    resolved: ResolvedSpec
    config: Any


@dataclasses.dataclass(frozen=True)
class Builtin:
    """One built-in node of the pipeline.

    Attributes:
      id: the component id (`ExampleGen`), also the name `steps:` wire to.
      configured_by: the spec sections that set it up, as `python -m pipelines components` prints them.
      inputs: every input port the TFX component has (the graph rules check custom steps against them).
      outputs: output name -> artifact type name.
      wiring: spec -> {input: "Step.output"}: the inputs the compiler connects, and nothing else.
      build: (compilation, {input: channel}) -> the TFX component, before `with_id`; the channels are
        `wiring`'s, already resolved. Imports TFX inside, so that reading the table does not.
      enabled: whether a spec has this node (the Deployer only with `deploy.enabled`).
      absent_outputs: spec -> outputs this spec's node does not produce (Transform's
        `transformed_examples` without `transform.materialize`).
      waits_for: nodes this one runs after without reading their outputs (Transform waits for DataGate's verdict).
      gates_data: the node that stops a run on bad data; the report says whether it passed.
    """

    id: str
    configured_by: str
    inputs: Mapping[str, Port]
    outputs: Mapping[str, str]
    wiring: Callable[[PipelineSpec], dict[str, str]]
    build: Callable[[Compilation, dict[str, Any]], Any]
    enabled: Callable[[PipelineSpec], bool] = always
    absent_outputs: Callable[[PipelineSpec], tuple[str, ...]] = _none
    waits_for: tuple[str, ...] = ()
    gates_data: bool = False

    def node(self, spec: PipelineSpec) -> Node:
        """This built-in as a graph node for `spec`: its ports, the outputs it has and its wiring."""
        absent = self.absent_outputs(spec)
        outputs = {name: type_name for name, type_name in self.outputs.items() if name not in absent}
        refs = {name: Ref(*text.split(".")) for name, text in self.wiring(spec).items()}
        return Node(self.id, dict(self.inputs), outputs, refs)
