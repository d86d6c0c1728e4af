"""The runs of a pipeline root, read from its ML Metadata (SQLite) and its run records.

TFX registers each run as a `pipeline_run` context named by the run id (TFX's older
launcher, which the airflow target's tasks use, as a `run` context: `report.mlmd_contexts`); every
component's execution in it is COMPLETE (it ran), CACHED (TFX reused an earlier
output) or FAILED. Blessing, metrics and the pushed path come from the run's
record when there is one, else from ML Metadata (`pipelines.outcome.summary`).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
from typing import Any

from pipelines.history.records import RunRecord, read_records
from pipelines.outcome.metadata_file import open_metadata
from pipelines.outcome.summary import summarize
from pipelines.report.mlmd_contexts import KFP_DAG_EXECUTION, component_ids, run_contexts, type_name
from pipelines.report.span_history import run_spans

__all__ = [
    "ArtifactInfo",
    "ComponentRun",
    "RunInfo",
    "RootError",
    "metadata_path",
    "open_store",
    "list_runs",
    "runs_in_store",
    "fill_summary",
]

OUTPUT_EVENTS = (4, 1)  # Event.OUTPUT, Event.DECLARED_OUTPUT
INPUT_EVENTS = (3, 2)  # Event.INPUT, Event.DECLARED_INPUT
_STATUS = {3: "executed", 5: "cached", 4: "failed", 2: "running", 1: "new", 6: "canceled"}  # Execution.State


class RootError(ValueError):
    """The folder holds no ML Metadata to read runs from."""


@dataclasses.dataclass
class ArtifactInfo:
    """One artifact: its id, type (`Model`, `Examples`...), output key, URI and custom properties."""

    id: int
    type: str
    key: str
    uri: str
    properties: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ComponentRun:
    """One component's execution in a run: `status` is executed, cached, failed or running."""

    component_id: str
    status: str
    execution_id: int
    started: float  # seconds since the epoch
    seconds: float
    outputs: list[ArtifactInfo] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class RunInfo:
    """One run: its id, start, duration, status, components and summary (blessing, metrics, pushed path)."""

    run_id: str
    pipeline: str
    started: str
    seconds: float
    status: str
    components: list[ComponentRun]
    summary: dict[str, Any]
    pushed_version: str | None
    input_fingerprint: str | None
    record: RunRecord | None = None
    ingested_spans: list[int] = dataclasses.field(default_factory=list)  # spans ExampleGen wrote in this run
    trained_spans: list[int] = dataclasses.field(default_factory=list)  # spans Transform/the Trainer read (window)
    metadata: str | None = None  # HOST:PORT of the cluster ML Metadata it was read from (Kubeflow); None: a root

    def component(self, component_id: str) -> ComponentRun | None:
        """The component's execution in this run, or None."""
        return next((c for c in self.components if c.component_id == component_id), None)


def metadata_path(root: str) -> str:
    """`<root>/metadata.sqlite`, checked to exist.

    Raises:
        RootError: there is no ML Metadata file under `root`.
    """
    path = os.path.join(root, "metadata.sqlite")
    if not os.path.isfile(path):
        raise RootError(
            f"no ML Metadata under {root}. Expected a pipeline root holding metadata.sqlite (the "
            f"`pipeline.root` of a spec that has run). Received: {root}. Run the pipeline first "
            "(`python -m pipelines run SPEC`), or pass its spec or root."
        )
    return path


def open_store(root: str):
    """A read-only ML Metadata store on `<root>/metadata.sqlite`.

    Raises:
        RootError: there is no ML Metadata file under `root`.
        MetadataUnreadable: the file is not an ML Metadata store SQLite can read (one line: the file and the fix).
    """

    return open_metadata(metadata_path(root), readonly=True)


def property_values(properties) -> dict[str, Any]:
    """An MLMD property map as plain Python values."""
    return {
        key: getattr(value, value.WhichOneof("value")) for key, value in properties.items() if value.WhichOneof("value")
    }


def fill_summary(root: str, run: RunInfo) -> RunInfo:
    """Reads blessing, metrics and pushed path of a finished run that has no record (TFMA reads the evaluation).

    Args:
        root: the pipeline root.
        run: a run from `list_runs(root, with_summaries=False)`; its `summary` is filled in place.

    Returns:
        `run`.
    """
    if run.summary or run.record is not None or run.status != "succeeded":
        return run
    import logging

    from tfx.orchestration import metadata

    tf_logger = logging.getLogger("tensorflow")
    level = tf_logger.level
    tf_logger.setLevel(logging.ERROR)  # TFMA's deprecation warnings are not for this reader
    try:
        connection = metadata.sqlite_metadata_connection_config(metadata_path(root))
        run.summary = summarize(connection, run.components).to_dict()
    finally:
        tf_logger.setLevel(level)
    return run


def _iso(millis: int) -> str:
    return datetime.datetime.fromtimestamp(millis / 1000).isoformat(timespec="seconds")


def list_runs(root: str, with_summaries: bool = True) -> list[RunInfo]:
    """Every run recorded in `<root>`'s ML Metadata, newest first.

    Args:
        root: the pipeline root.
        with_summaries: read blessing and metrics of runs without a record from ML Metadata (TFMA: slower).

    Returns:
        The runs, newest first.

    Raises:
        RootError: there is no ML Metadata file under `root`.
    """
    runs = runs_in_store(open_store(root), read_records(root))
    for run in runs if with_summaries else []:
        fill_summary(root, run)
    return runs


def runs_in_store(store, records: dict[str, RunRecord] | None = None, pipeline: str | None = None) -> list[RunInfo]:
    """Every run in an ML Metadata store (a root's SQLite, or a cluster's `cluster_metadata` view), newest
    first, without the summaries that `fill_summary` reads from a root.

    Args:
        store: an ML Metadata store.
        records: the root's run records by run id (none on a cluster).
        pipeline: the pipeline's name, else the store's one `pipeline` context.
    """
    records = records or {}
    pipeline = pipeline or next((c.name for c in store.get_contexts_by_type("pipeline")), "?")
    node_of = component_ids(store)
    spans = run_spans(store, node_of)
    runs, created = [], []  # created: each run context's creation (ms): KFP's run ids are not in time order
    for run_id, context in run_contexts(store):
        created.append(context.create_time_since_epoch)
        executions = sorted(
            (e for e in store.get_executions_by_context(context.id) if e.type != KFP_DAG_EXECUTION),
            key=lambda e: e.id,
        )
        events = store.get_events_by_execution_ids([e.id for e in executions]) if executions else []
        artifacts = {a.id: a for a in store.get_artifacts_by_id(list({e.artifact_id for e in events}))}
        outputs: dict[int, list[ArtifactInfo]] = {}
        for event in events:
            if event.type in OUTPUT_EVENTS and event.artifact_id in artifacts:
                artifact = artifacts[event.artifact_id]
                key = event.path.steps[0].key if event.path.steps else ""
                info = ArtifactInfo(
                    artifact.id, type_name(artifact), key, artifact.uri, property_values(artifact.custom_properties)
                )
                outputs.setdefault(event.execution_id, []).append(info)
        components = [
            ComponentRun(
                component_id=node_of.get(e.id, e.type.rsplit(".", 1)[-1]),
                status=_STATUS.get(e.last_known_state, "unknown"),
                execution_id=e.id,
                started=e.create_time_since_epoch / 1000,
                seconds=round((e.last_update_time_since_epoch - e.create_time_since_epoch) / 1000, 3),
                outputs=outputs.get(e.id, []),
            )
            for e in executions
        ]
        last = max((e.last_update_time_since_epoch for e in executions), default=context.create_time_since_epoch)
        record = records.get(run_id)
        statuses = {c.status for c in components}
        status = "failed" if "failed" in statuses else "running" if statuses & {"running", "new"} else "succeeded"
        runs.append(
            RunInfo(
                run_id=run_id,
                pipeline=pipeline,
                started=_iso(context.create_time_since_epoch),
                seconds=record.seconds if record else round((last - context.create_time_since_epoch) / 1000, 1),
                status=status,
                components=components,
                summary=record.summary if record else {},
                pushed_version=_pushed_version(components),
                input_fingerprint=_input_fingerprint(components),
                record=record,
            )
        )
        if run_id in spans:
            runs[-1].ingested_spans = spans[run_id].ingested
            runs[-1].trained_spans = spans[run_id].trained
    return [run for _, run in sorted(zip(created, runs), key=lambda pair: (pair[0], pair[1].run_id), reverse=True)]


def _pushed_version(components: list[ComponentRun]) -> str | None:
    pusher = next((c for c in components if c.component_id == "Pusher"), None)
    for artifact in pusher.outputs if pusher else []:
        if artifact.properties.get("pushed"):
            return str(artifact.properties.get("pushed_version") or "") or None
    return None


def _input_fingerprint(components: list[ComponentRun]) -> str | None:
    for component in components:
        for artifact in component.outputs:
            if artifact.type == "Examples" and "input_fingerprint" in artifact.properties:
                return str(artifact.properties["input_fingerprint"])
    return None
