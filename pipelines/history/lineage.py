"""Lineage of a run's model: which data, spec and code made it, and where it went.

Walks ML Metadata's events back from the pushed model (or, when nothing was
pushed, the trained model): the artifact's producing execution, that
execution's inputs, and so on back to the examples ExampleGen read. A cached
execution reuses an output, so the producer is the execution that first wrote it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from pipelines.history.mlmd_runs import INPUT_EVENTS, OUTPUT_EVENTS, ArtifactInfo, RunInfo, open_store, property_values

__all__ = ["Lineage", "LineageStep", "run_lineage"]

_NOT_FOLLOWED = ("baseline_model",)  # the previous blessed model: its own lineage, not this one's


@dataclasses.dataclass
class LineageStep:
    """One execution on the path: the component, its execution id and state, what it read and wrote."""

    component_id: str
    execution_id: int
    inputs: list[ArtifactInfo]
    outputs: list[ArtifactInfo]
    properties: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Lineage:
    """From the data to the served model; `steps` run from the examples to the model, in execution order."""

    run_id: str
    model: ArtifactInfo | None
    steps: list[LineageStep]
    input_base: str | None
    input_patterns: list[str]
    input_fingerprint: str | None
    data_files: dict[str, dict[str, int]]
    spec_file: str | None
    spec_sha256: str | None
    code_fingerprint: str | None
    pushed_version: str | None
    pushed_destination: str | None
    serving_version: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


def _start(run: RunInfo) -> ArtifactInfo | None:
    """The pushed model when the run pushed one, else the model the run trained or reused."""
    for component_id, key in (("Pusher", "pushed_model"), ("Trainer", "model")):
        component = run.component(component_id)
        for artifact in component.outputs if component else []:
            if artifact.key == key and (key != "pushed_model" or artifact.properties.get("pushed")):
                return artifact
    return None


def run_lineage(root: str, run: RunInfo) -> Lineage:
    """The lineage of `run`'s model, read from `<root>`'s ML Metadata.

    Args:
        root: the pipeline root.
        run: a run from `list_runs(root)`.

    Returns:
        A `Lineage`; with no model in the run, its steps are empty.

    Raises:
        RootError: there is no ML Metadata file under `root`.
    """
    store = open_store(root)
    node_of = {}
    for context in store.get_contexts_by_type("node"):
        for execution in store.get_executions_by_context(context.id):
            node_of[execution.id] = context.name.split(".", 1)[-1]
    start = _start(run)
    steps: dict[int, LineageStep] = {}
    queue = [start.id] if start else []
    seen: set[int] = set()
    while queue:
        artifact_id = queue.pop()
        if artifact_id in seen:
            continue
        seen.add(artifact_id)
        producers = sorted(
            e.execution_id for e in store.get_events_by_artifact_ids([artifact_id]) if e.type in OUTPUT_EVENTS
        )
        if not producers or producers[0] in steps:
            continue
        execution = store.get_executions_by_id([producers[0]])[0]
        events = store.get_events_by_execution_ids([execution.id])
        artifacts = {a.id: a for a in store.get_artifacts_by_id(list({e.artifact_id for e in events}))}
        step = LineageStep(node_of.get(execution.id, execution.type), execution.id, [], [])
        for event in events:
            artifact = artifacts[event.artifact_id]
            key = event.path.steps[0].key if event.path.steps else ""
            info = ArtifactInfo(
                artifact.id, artifact.type, key, artifact.uri, property_values(artifact.custom_properties)
            )
            if event.type in INPUT_EVENTS:
                step.inputs.append(info)
                if key not in _NOT_FOLLOWED:
                    queue.append(artifact.id)
            elif event.type in OUTPUT_EVENTS:
                step.outputs.append(info)
        if step.component_id == "ExampleGen":
            step.properties = property_values(execution.custom_properties)
        steps[execution.id] = step
    example_gen = next((s for s in steps.values() if s.component_id == "ExampleGen"), None)
    patterns = []
    if example_gen and example_gen.properties.get("input_config"):
        patterns = [s.get("pattern", "") for s in json.loads(example_gen.properties["input_config"]).get("splits", [])]
    record = run.record
    pushed = start if start and start.type == "PushedModel" else None
    serving = (run.summary.get("deployed") or {}).get("version")
    return Lineage(
        run_id=run.run_id,
        model=start,
        steps=[steps[i] for i in sorted(steps)],
        input_base=example_gen.properties.get("input_base") if example_gen else None,
        input_patterns=patterns,
        input_fingerprint=run.input_fingerprint,
        data_files=record.data_files if record else {},
        spec_file=record.spec_file if record else None,
        spec_sha256=hashlib.sha256(record.spec_text.encode()).hexdigest() if record else None,
        code_fingerprint=record.code_fingerprint if record else None,
        pushed_version=str(pushed.properties.get("pushed_version")) if pushed else None,
        pushed_destination=pushed.properties.get("pushed_destination") if pushed else None,
        serving_version=serving if serving not in (None, "-1", -1) else None,
    )
