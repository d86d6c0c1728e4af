"""Gathers what the report shows from a run: ML Metadata, the artifacts' files and the run summary.

Each section is read on its own; one that cannot be read (a component failed or did not run, a
file is missing) becomes a note saying what is missing and why, and the other sections still show.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any

from pipelines.outcome.summary import output_artifacts
from pipelines.report.calibration import CalibrationCurve, calibration_curves
from pipelines.report.dag import DagLayout, layout
from pipelines.report.eval_plots import BinaryConfusion, ResidualBucket, binary_confusion, residual_buckets
from pipelines.report.evaluation import MetricRow, metric_rows
from pipelines.report.span_history import SpanDrift, SpanMetrics, span_drift, span_metrics
from pipelines.report.statistics import FeatureStats, feature_statistics, read_split_statistics
from pipelines.report.training import training_curves
from pipelines.spec.data_rules import label_columns
from serving import config as serving_config

__all__ = ["RunFacts", "ReportData", "collect", "pipeline_graph", "MAX_FEATURES_SHOWN"]

MAX_FEATURES_SHOWN = 100  # columns drawn in the statistics section (each chart costs ~40 ms)


@dataclasses.dataclass
class RunFacts:
    """What the runner knows about one run, for the report.

    Args:
        run_id: the run's id.
        status: `succeeded`, `failed` or `interrupted`.
        seconds: the run's wall time.
        log_file: the run's log.
        order: component ids in the compiled pipeline's order.
        upstream: component id -> the ids it depends on.
        results: the components that finished (`pipelines.outcome.results.ComponentResult`).
        failed: the component that failed, if one did, and its error.
        interrupted: the component that was running when Ctrl-C or SIGTERM stopped the run, its
            seconds, and the signal (`SIGINT`, `SIGTERM`).
    """

    run_id: str
    status: str
    seconds: float
    log_file: str
    order: list[str]
    upstream: dict[str, list[str]]
    results: list = dataclasses.field(default_factory=list)
    failed: tuple[str, float, str] | None = None  # (component id, seconds, error text)
    interrupted: tuple[str | None, float, str] | None = None  # (component id, seconds, signal)


@dataclasses.dataclass
class ReportData:
    """Everything the template draws; a section left empty has a note in `missing` under its name."""

    pipeline: str
    run: RunFacts
    dag: DagLayout
    features: list[FeatureStats] = dataclasses.field(default_factory=list)
    splits: list[str] = dataclasses.field(default_factory=list)
    features_left_out: int = 0  # columns beyond `MAX_FEATURES_SHOWN`, whose statistics are only in the artifact
    statistics_uri: str = ""
    anomalies: list[str] | None = None
    curves: dict[str, dict[str, list[tuple[int, float]]]] = dataclasses.field(default_factory=dict)
    training: dict[str, Any] = dataclasses.field(default_factory=dict)
    blessed: bool | None = None
    reasons: list[str] = dataclasses.field(default_factory=list)
    metrics: list[MetricRow] = dataclasses.field(default_factory=list)
    classes: list[str] = dataclasses.field(default_factory=list)
    confusion_matrix: list[list[int]] = dataclasses.field(default_factory=list)
    binary_confusion: BinaryConfusion | None = None
    residuals: list[ResidualBucket] = dataclasses.field(default_factory=list)
    pushed_path: str | None = None
    new_version: bool = False
    deployed: dict[str, Any] = dataclasses.field(default_factory=dict)
    serving_labels: dict[str, int] = dataclasses.field(default_factory=dict)
    serving_versions: list[int] = dataclasses.field(default_factory=list)
    serving_config: str | None = None
    missing: dict[str, str] = dataclasses.field(default_factory=dict)
    dropped_unlabelled: int = 0  # `label.missing: drop`: rows without a label left out (`RunSummary`)
    slices: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # `evaluation.slices` (`RunSummary`)
    thresholds: Mapping = dataclasses.field(default_factory=dict)  # `spec.evaluation.thresholds`
    fairness: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # `evaluation.fairness` gaps
    confidence_level: float | None = None  # `evaluation.confidence`: the metrics' intervals' level
    calibration: list[CalibrationCurve] = dataclasses.field(default_factory=list)  # a classifier's, per class
    # With spans in `data.path`: the blessed models' metrics by newest span trained on, and the drift per span pair.
    span_metrics: list[SpanMetrics] = dataclasses.field(default_factory=list)
    span_drift: list[SpanDrift] = dataclasses.field(default_factory=list)
    drift_limit: float | None = None  # `data.checks.drift` (None: not set)
    # `tuning:`: the Tuner's trials, best first (`RunSummary.tuning`), the knobs they set and the objective.
    tuning: dict[str, Any] = dataclasses.field(default_factory=dict)
    tuning_knobs: list[str] = dataclasses.field(default_factory=list)
    tuning_objective: str = ""


def _outputs(connection_config, results) -> dict[str, dict[str, list]]:
    """Component id -> output key -> artifact protos, for every component that finished."""
    from tfx.orchestration import metadata

    found = {}
    with metadata.Metadata(connection_config) as handle:
        for result in results:
            if result.execution_id is not None:
                found[result.component_id] = output_artifacts(handle.store, result.execution_id)
    return found


def _split_names(artifact) -> list[str]:
    from tfx.types import artifact_utils

    return artifact_utils.decode_split_names(artifact.properties["split_names"].string_value)


def _why_absent(component: str, run: RunFacts) -> str:
    if run.failed and run.failed[0] == component:
        return f"{component} failed: {run.failed[2].splitlines()[0] if run.failed[2] else 'see the log'}"
    if component not in run.order:
        return f"this pipeline has no {component}"
    if run.interrupted:
        return f"{component} did not finish (the run was interrupted: {run.interrupted[2]})"
    return f"{component} did not run (an earlier component failed)" if run.failed else f"{component} wrote nothing"


def _read(data: ReportData, section: str, read: Callable[[], str | None]) -> None:
    """Runs one section's reader; a problem (returned, or raised) becomes that section's note."""
    try:
        note = read()
    except Exception as error:  # noqa: BLE001 - one unreadable section must not cost the others
        note = f"could not read it ({type(error).__name__}: {error})"
    if note:
        data.missing[section] = note


def _statistics(data: ReportData, outputs: Mapping[str, Mapping[str, list]], spec) -> str | None:
    artifacts = outputs.get("StatisticsGen", {}).get("statistics", [])
    if not artifacts:
        return _why_absent("StatisticsGen", data.run)
    datasets = read_split_statistics(artifacts[0].uri, _split_names(artifacts[0]))
    if not datasets:
        return f"no FeatureStats.pb under {artifacts[0].uri}"
    data.splits = list(datasets)
    features = feature_statistics(datasets)
    if len(features) > MAX_FEATURES_SHOWN:
        # A wide table whose columns all reach StatisticsGen (a transform module or a step reads every column):
        # one chart per column took minutes. The spec's own columns first, then the rest by name, up to the cap.
        named = {*spec.features, *label_columns(spec)}
        features.sort(key=lambda feature: feature.name not in named)
        data.features_left_out = len(features) - MAX_FEATURES_SHOWN
        data.statistics_uri = artifacts[0].uri
        features = features[:MAX_FEATURES_SHOWN]
    data.features = features
    return None


def _anomalies(data: ReportData, outputs: Mapping[str, Mapping[str, list]]) -> str | None:
    from components.data_gate.component import describe_anomalies  # TFX: only for a run whose report has anomalies

    artifacts = outputs.get("ExampleValidator", {}).get("anomalies", [])
    if not artifacts:
        return _why_absent("ExampleValidator", data.run)
    data.anomalies = describe_anomalies(artifacts[0].uri, _split_names(artifacts[0]))
    return None


def _training(data: ReportData, outputs: Mapping[str, Mapping[str, list]], summary) -> str | None:
    data.training = dict(getattr(summary, "training", None) or {})
    artifacts = outputs.get("Trainer", {}).get("model_run", [])
    if not artifacts:
        return _why_absent("Trainer", data.run)
    data.curves = training_curves(artifacts[0].uri)
    if not data.curves:
        return f"no TensorBoard scalars under {artifacts[0].uri}"
    return None


def _tuning(data: ReportData, summary, spec) -> str | None:
    if spec.tuning is None:
        return None
    data.tuning = dict(getattr(summary, "tuning", None) or {})
    data.tuning_objective = spec.tuning.objective
    if not data.tuning.get("trials"):
        return _why_absent("Tuner", data.run) if not data.tuning else "the Tuner recorded no completed trial"
    data.tuning_knobs = sorted({name for trial in data.tuning["trials"] for name in trial["values"]})
    return None


def _evaluation(data: ReportData, summary, thresholds: Mapping) -> str | None:
    if summary is None or summary.blessed is None:
        return _why_absent("Evaluator", data.run)
    data.blessed, data.reasons = summary.blessed, list(summary.reasons)
    confidence = dict(getattr(summary, "confidence", {}) or {})
    data.confidence_level = confidence.get("level")
    data.metrics = metric_rows(
        summary.metrics, summary.changes, thresholds, summary.reasons, intervals=confidence.get("intervals")
    )
    data.classes, data.confusion_matrix = list(summary.classes), [list(r) for r in summary.confusion_matrix]
    data.slices, data.thresholds = list(getattr(summary, "slices", [])), thresholds
    data.fairness = list(getattr(summary, "fairness", []))
    return None


def _evaluation_plots(data: ReportData, outputs: Mapping[str, Mapping[str, list]]) -> str | None:
    """The binary confusion matrix, a classifier's calibration or the residual buckets; none without an Evaluator."""
    artifacts = outputs.get("Evaluator", {}).get("evaluation", [])
    if artifacts:
        data.binary_confusion = binary_confusion(artifacts[0].uri)
        data.residuals = residual_buckets(artifacts[0].uri)
        data.calibration = calibration_curves(artifacts[0].uri, data.classes)
    return None


def _serving(data: ReportData, summary, resolved) -> str | None:
    from components.deployer.component import config_dir_for  # TFX: only for a run with a Deployer

    if summary is not None:
        data.pushed_path, data.new_version = summary.pushed_path, summary.new_version
        data.deployed = dict(summary.deployed)
    deploy = resolved.spec.deploy
    path = (
        os.path.join(os.path.dirname(resolved.spec_file), deploy.config)
        if deploy.config
        else os.path.join(config_dir_for(resolved.serving_dir, resolved.model_name), serving_config.MODEL_CONFIG_FILE)
    )
    if not os.path.exists(path):
        return f"no serving config at {path} (labels are written when `deploy.enabled` is on)"
    config = serving_config.read_text_proto(path, serving_config.ModelServerConfig)
    model = serving_config.find_model(config, resolved.model_name)
    data.serving_config = path
    data.serving_labels = dict(sorted(model.version_labels.items()))
    data.serving_versions = sorted(model.model_version_policy.specific.versions)
    return None


def _spans(data: ReportData, connection_config, resolved) -> str | None:
    """Across the root's runs: the blessed models' metrics by span and the drift between spans."""
    if not resolved.spans:
        return None
    from tfx.orchestration import metadata

    with metadata.Metadata(connection_config) as handle:
        data.span_metrics = span_metrics(handle.store)
        data.span_drift = span_drift(handle.store)
    data.drift_limit = resolved.spec.data.checks.drift or None
    return None


def collect(resolved, connection_config, run: RunFacts, summary=None) -> ReportData:
    """Reads every section of the report for one run.

    Args:
        resolved: the run's `ResolvedSpec`.
        connection_config: the ML Metadata connection (the compiled pipeline's `metadata_connection_config`).
        run: what the runner knows about the run.
        summary: the `RunSummary` (None when the run failed before it was made).

    Returns:
        The report's data; sections that could not be read are named in `missing`.
    """
    status = {r.component_id: r.status for r in run.results}
    seconds = {r.component_id: r.seconds for r in run.results}
    if run.failed:
        status[run.failed[0]], seconds[run.failed[0]] = "failed", run.failed[1]
    if run.interrupted and run.interrupted[0]:
        status[run.interrupted[0]], seconds[run.interrupted[0]] = "interrupted", run.interrupted[1]
    data = ReportData(resolved.name, run, layout(run.order, run.upstream, status, seconds))
    data.dropped_unlabelled = getattr(summary, "dropped_unlabelled", 0)
    outputs: dict[str, dict[str, list]] = {}

    def read_outputs() -> None:
        outputs.update(_outputs(connection_config, run.results))

    _read(data, "artifacts", read_outputs)
    _read(data, "statistics", lambda: _statistics(data, outputs, resolved.spec))
    _read(data, "anomalies", lambda: _anomalies(data, outputs))
    _read(data, "training", lambda: _training(data, outputs, summary))
    _read(data, "tuning", lambda: _tuning(data, summary, resolved.spec))
    _read(data, "evaluation", lambda: _evaluation(data, summary, resolved.spec.evaluation.thresholds))
    _read(data, "evaluation plots", lambda: _evaluation_plots(data, outputs))
    _read(data, "serving", lambda: _serving(data, summary, resolved))
    _read(data, "spans", lambda: _spans(data, connection_config, resolved))
    return data


def pipeline_graph(tfx_pipeline) -> tuple[list[str], dict[str, list[str]]]:
    """(component ids in order, id -> upstream ids) of a compiled TFX pipeline."""
    order = [c.id for c in tfx_pipeline.components]
    return order, {c.id: sorted(u.id for u in c.upstream_nodes) for c in tfx_pipeline.components}
