"""Spans across the runs of a pipeline root, from ML Metadata: what each run ingested and trained on, the
blessed models' metrics by span, and the drift between consecutive spans.

Every orchestrator records the same facts: ExampleGen's Examples carry TFX's `span` (and `version`), the
Transform and Trainer executions have those Examples as inputs (a window reads several), and the
Evaluator writes `verdict.json` (the whole eval split's metrics and the gated names) beside its blessing.
So `runs`, `runs show` and the report read runs of the local, beam, airflow and kubeflow targets alike.

Example:
    >>> store = open_metadata("runs/taxi/metadata.sqlite")
    >>> run_spans(store)["20261129-0400"]
    RunSpans(ingested=[3], trained=[2, 3])
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from pipelines.report.mlmd_contexts import component_ids, int_property, run_contexts, type_name

__all__ = [
    "RunSpans",
    "SpanMetrics",
    "SpanDrift",
    "MAX_DRIFT_PAIRS",
    "read_verdict",
    "run_spans",
    "span_metrics",
    "span_drift",
]

_OUTPUT_EVENTS = (4, 1)  # Event.OUTPUT, Event.DECLARED_OUTPUT
_INPUT_EVENTS = (3, 2)  # Event.INPUT, Event.DECLARED_INPUT
MAX_DRIFT_PAIRS = 30  # span pairs measured for `runs show` and the report, newest first
_VERDICT_FILE = "verdict.json"  # components.evaluator.verdict.VERDICT_FILE, read without TFMA's import


@dataclasses.dataclass(frozen=True)
class RunSpans:
    """The spans one run's ExampleGen wrote (or found cached), and those its Transform/Trainer read."""

    ingested: list[int]
    trained: list[int]


@dataclasses.dataclass(frozen=True)
class SpanMetrics:
    """A blessed model's metrics, placed at the newest span it was trained on."""

    span: int
    run_id: str
    trained: list[int]
    metrics: dict[str, float]
    gated: list[str]


@dataclasses.dataclass(frozen=True)
class SpanDrift:
    """TFDV's distance between two consecutive spans' train splits, at the feature that moved most."""

    previous: int
    span: int
    feature: str
    distance: float


def _span(artifact) -> int | None:
    """The artifact's `span` (TFX's property, else the driver's custom property, KFP's double); None without one."""
    return int_property(artifact, "span")


def run_spans(store, node_of: dict[int, str] | None = None) -> dict[str, RunSpans]:
    """Run id -> the spans that run ingested and trained on; runs of a pipeline without spans are left out.

    `node_of`: `component_ids(store)` when the caller has it (each call reads every run's executions).
    """
    node_of = component_ids(store) if node_of is None else node_of
    result = {}
    for run_id, context in run_contexts(store):
        executions = store.get_executions_by_context(context.id)
        if not executions:
            continue
        events = store.get_events_by_execution_ids([e.id for e in executions])
        artifacts = {a.id: a for a in store.get_artifacts_by_id(list({e.artifact_id for e in events}))}
        ingested: set[int] = set()
        read: dict[str, set[int]] = {"Transform": set(), "Trainer": set()}
        for event in events:
            artifact = artifacts.get(event.artifact_id)
            if artifact is None or type_name(artifact) != "Examples":
                continue
            span, node = _span(artifact), node_of.get(event.execution_id)
            if not span:
                continue
            if node == "ExampleGen" and event.type in _OUTPUT_EVENTS:
                ingested.add(span)
            elif node in read and event.type in _INPUT_EVENTS:
                read[node].add(span)
        trained = read["Transform"] or read["Trainer"]  # Transform reads the raw window; the Trainer may not
        if ingested or trained:
            result[run_id] = RunSpans(sorted(ingested), sorted(trained))
    return result


def _blessings(store, node_of: dict[int, str]) -> dict[str, Any]:
    """Run id -> the Evaluator's blessing artifact output in that run."""
    found = {}
    for run_id, context in run_contexts(store):
        executions = [e for e in store.get_executions_by_context(context.id) if node_of.get(e.id) == "Evaluator"]
        events = store.get_events_by_execution_ids([e.id for e in executions]) if executions else []
        ids = [e.artifact_id for e in events if e.type in _OUTPUT_EVENTS]
        for artifact in store.get_artifacts_by_id(ids) if ids else []:
            if type_name(artifact) == "ModelBlessing":
                found[run_id] = artifact
    return found


def read_verdict(uri: str) -> dict[str, Any] | None:
    """The Evaluator's `verdict.json` beside the blessing at `uri`; None when it is not a readable local file."""
    path = os.path.join(uri, _VERDICT_FILE)
    if not os.path.isfile(path):  # an object-store root (kubeflow) is not read from here
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def span_metrics(store, spans: dict[str, RunSpans] | None = None) -> list[SpanMetrics]:
    """The blessed models' whole-eval-split metrics, one point per newest span trained on, oldest span first.

    A span trained on by several runs with a blessed model shows the newest such run (a retrain replaces it).
    """
    node_of = component_ids(store)
    spans = run_spans(store, node_of) if spans is None else spans
    by_span: dict[int, tuple[int, SpanMetrics]] = {}
    for run_id, blessing in _blessings(store, node_of).items():
        trained = spans.get(run_id, RunSpans([], [])).trained
        if not trained or int_property(blessing, "blessed") != 1:
            continue
        verdict = read_verdict(blessing.uri)
        if not verdict or not verdict.get("metrics"):
            continue
        point = SpanMetrics(trained[-1], run_id, trained, dict(verdict["metrics"]), list(verdict.get("gated") or []))
        created = blessing.create_time_since_epoch
        if point.span not in by_span or by_span[point.span][0] <= created:
            by_span[point.span] = (created, point)
    return [by_span[span][1] for span in sorted(by_span)]


def _statistics_by_span(store) -> dict[int, Any]:
    """Span -> the newest LIVE StatisticsGen output of that span."""
    from ml_metadata.proto import metadata_store_pb2

    newest: dict[int, Any] = {}
    for artifact in store.get_artifacts_by_type("ExampleStatistics"):
        span = _span(artifact)
        if not span or artifact.state != metadata_store_pb2.Artifact.LIVE:
            continue
        kept = newest.get(span)
        if kept is None or (artifact.create_time_since_epoch, artifact.id) > (kept.create_time_since_epoch, kept.id):
            newest[span] = artifact
    return newest


def _newest_schema(store):
    schemas = [a for a in store.get_artifacts_by_type("Schema") if os.path.isdir(a.uri)]
    return max(schemas, key=lambda a: (a.create_time_since_epoch, a.id), default=None)


def span_drift(store, newest: int = MAX_DRIFT_PAIRS) -> list[SpanDrift]:
    """The drift of each span from the span before it (train splits, TFDV's comparators as DataGate's).

    Args:
        store: the pipeline root's ML Metadata store.
        newest: how many of the newest span pairs to measure (each reads two statistics files).

    Returns:
        One entry per pair of consecutive spans with statistics, oldest first; empty with fewer than two
        spans, without a schema, or with statistics on an object store.
    """
    from components.data_gate.drift import worst_drift  # TFDV: only for a pipeline with spans

    statistics = {span: a for span, a in _statistics_by_span(store).items() if os.path.isdir(a.uri)}
    schema = _newest_schema(store)
    ordered = sorted(statistics)[-(newest + 1) :]
    if len(ordered) < 2 or schema is None:
        return []
    from tfx.components.statistics_gen import stats_artifact_utils
    from tfx.types import artifact_utils
    from tfx.utils import io_utils

    schema_proto = io_utils.SchemaReader().read(io_utils.get_only_uri_in_dir(schema.uri))
    train = {}
    for span in ordered:
        artifact = artifact_utils.deserialize_artifact(
            _artifact_type(store, statistics[span].type_id), statistics[span]
        )
        train[span] = stats_artifact_utils.load_statistics(artifact, "train").proto()
    result = []
    for previous, span in zip(ordered, ordered[1:]):
        worst = worst_drift(train[span], train[previous], schema_proto)
        if worst is not None:
            result.append(SpanDrift(previous, span, worst[0], worst[1]))
    return result


def _artifact_type(store, type_id: int):
    (artifact_type,) = store.get_artifact_types_by_id([type_id])
    return artifact_type
