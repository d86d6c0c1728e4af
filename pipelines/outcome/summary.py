"""What a finished run produced, read back from ML Metadata.

Blessed or not and why (TFMA's validation result), the metrics, the pushed
path, and the training summary.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from components.evaluator.confidence import interval_text
from components.evaluator.fairness import fairness_lines
from components.trainer.monitoring.input_wait import input_wait_is_actionable
from components.tuner.results import tuning_summary
from pipelines.spec.label_missing import DROP_STEP

__all__ = ["RunSummary", "summarize", "output_artifacts", "format_summary", "tuning_line", "worst_slice_lines"]


@dataclasses.dataclass
class RunSummary:
    blessed: bool | None = None
    reasons: list[str] = dataclasses.field(default_factory=list)
    metrics: dict[str, float] = dataclasses.field(default_factory=dict)
    changes: dict[str, float] = dataclasses.field(default_factory=dict)
    pushed_path: str | None = None
    new_version: bool = False
    training: dict[str, Any] = dataclasses.field(default_factory=dict)
    deployed: dict[str, Any] = dataclasses.field(default_factory=dict)
    output_uris: list[str] = dataclasses.field(default_factory=list)
    # Multi-class labels: the class names in index order and, when declared, the confusion matrix
    # (rows: actual class, columns: predicted class).
    classes: list[str] = dataclasses.field(default_factory=list)
    confusion_matrix: list[list[int]] = dataclasses.field(default_factory=list)
    # `evaluation.sample_rows`: [rows scored, rows in the eval split]; empty when every row was scored.
    eval_sample: list[int] = dataclasses.field(default_factory=list)
    # `label.missing: drop`: the rows without a label that the `DropMissingLabels` step left out.
    dropped_unlabelled: int = 0
    # `evaluation.slices`: one row per slice (`components.evaluator.slice_results.slice_table`), and the
    # gated metrics with their direction (True: higher is better).
    slices: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    slice_gates: dict[str, bool] = dataclasses.field(default_factory=dict)
    # `evaluation.fairness`: the widest gap of each rate per cut and slice spec (`components.evaluator.fairness`).
    fairness: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # `evaluation.confidence`: {"level", "intervals": {name: [value, lower, upper]}, "gated": [names]}.
    confidence: dict[str, Any] = dataclasses.field(default_factory=dict)
    # `tuning:`: {"best": {knob: value}, "trials": [{"trial_id", "score", "values"}], best first}
    # (`components.tuner.results`); empty without a Tuner.
    tuning: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("output_uris")
        return data


def output_artifacts(store, execution_id: int) -> dict[str, list]:
    """Output key -> artifact protos of one execution (cached ones included)."""
    from ml_metadata.proto import metadata_store_pb2

    events = [
        e
        for e in store.get_events_by_execution_ids([execution_id])
        if e.type in (metadata_store_pb2.Event.OUTPUT, metadata_store_pb2.Event.DECLARED_OUTPUT)
    ]
    artifacts = {a.id: a for a in store.get_artifacts_by_id([e.artifact_id for e in events])}
    result: dict[str, list] = {}
    for event in events:
        key = event.path.steps[0].key if event.path.steps else ""
        result.setdefault(key, []).append(artifacts[event.artifact_id])
    return result


def _custom(artifact, name: str):
    value = artifact.custom_properties.get(name)
    if value is None:
        return None
    return getattr(value, value.WhichOneof("value"))


def _evaluation(uri: str, summary: RunSummary, verdict: dict | None) -> None:
    """Metrics (per-class ones as `precision@<class>`) and, without a `verdict.json`, TFMA's reasons."""
    import tensorflow_model_analysis as tfma

    from components.evaluator.verdict import (
        confusion_matrix,
        describe_failure,
    )  # TFMA: only when a run has an evaluation

    try:
        for metrics in tfma.load_metrics(uri):
            if metrics.slice_key.single_slice_keys:
                continue  # a slice's metrics (`evaluation.slices`): the verdict's `slices`
            for key in metrics.metric_keys_and_values:
                per_class = "@" in key.key.name
                if key.key.model_name in ("", "candidate") and (per_class or not key.key.HasField("sub_key")):
                    value = key.value
                    if value.HasField("double_value"):
                        target = summary.changes if key.key.is_diff else summary.metrics
                        target[key.key.name] = round(value.double_value.value, 4)
        if verdict is not None:
            summary.reasons.extend(verdict.get("reasons") or [])
            summary.classes = list(verdict.get("classes") or [])
            summary.slices = list(verdict.get("slices") or [])
            summary.slice_gates = dict(verdict.get("slice_gates") or {})
            summary.fairness = list(verdict.get("fairness") or [])
            summary.confidence = dict(verdict.get("confidence") or {})
            if verdict.get("sample_rows"):
                summary.eval_sample = [int(verdict["sample_rows"]), int(verdict["eval_rows"])]
            if len(summary.classes) > 2:
                summary.confusion_matrix = confusion_matrix(uri, len(summary.classes)) or []
            return
        validation = tfma.load_validation_result(uri)
    except Exception as error:  # noqa: BLE001 - the summary must not fail the run
        summary.reasons.append(f"could not read the evaluation ({type(error).__name__}: {error})")
        return
    for failure in validation.metric_validations_per_slice:
        for failed in failure.failures:
            summary.reasons.append(describe_failure(failed, failure.slice_key))
    if validation.validation_ok:
        summary.reasons.append("all thresholds met")


def _value_artifact(uri: str) -> str | None:
    """A primitive output of a @component function: TFX stores it as a file at the URI."""
    if os.path.isfile(uri):
        with open(uri, encoding="utf-8") as handle:
            return handle.read().strip()
    return None


def summarize(connection_config, results) -> RunSummary:
    """Reads the outputs of the run's executions (`results` from run_pipeline)."""
    from tfx.orchestration import metadata

    from components.evaluator.verdict import read_verdict  # TFMA: only when a run has an evaluation

    summary = RunSummary()
    with metadata.Metadata(connection_config) as handle:
        for result in results:
            if result.execution_id is None:
                continue
            outputs = output_artifacts(handle.store, result.execution_id)
            summary.output_uris.extend(a.uri for artifacts in outputs.values() for a in artifacts)
            if result.component_id == "Evaluator":
                blessing = outputs.get("blessing", [])
                verdict = None
                if blessing:
                    summary.blessed = bool(_custom(blessing[0], "blessed"))
                    verdict = read_verdict(blessing[0].uri)
                for artifact in outputs.get("evaluation", []):
                    _evaluation(artifact.uri, summary, verdict)
            elif result.component_id == "Pusher":
                for artifact in outputs.get("pushed_model", []):
                    if _custom(artifact, "pushed"):
                        summary.pushed_path = _custom(artifact, "pushed_destination")
                        summary.new_version = bool(_custom(artifact, "new_version")) and result.status == "executed"
            elif result.component_id == "Deployer":
                for key in ("version", "p99_ms"):
                    for artifact in outputs.get(key, []):
                        summary.deployed[key] = _value_artifact(artifact.uri)
            elif result.component_id == DROP_STEP:
                for artifact in outputs.get("filtered_examples", []):
                    summary.dropped_unlabelled = int(_custom(artifact, "rows_dropped") or 0)
            elif result.component_id == "Tuner":
                best, trials = outputs.get("best_hyperparameters", []), outputs.get("tuner_results", [])
                summary.tuning = tuning_summary(best[0].uri if best else None, trials[0].uri if trials else None)
            elif result.component_id == "Trainer":
                for artifact in outputs.get("model_run", []):
                    path = os.path.join(artifact.uri, "training_summary.json")
                    if os.path.exists(path):
                        with open(path, encoding="utf-8") as summary_file:
                            summary.training = json.load(summary_file)
    return summary


def _training_line(training: dict[str, Any]) -> str:
    """One line: steps, fit time, steady-state speed, input wait, replicas, precision, accelerator-hours."""
    speed = training.get("examples_per_second")
    wait = training.get("input_wait_fraction")
    parts = [
        f"{training.get('train_steps')} steps in {training.get('seconds')}s",
        f"{training['epochs']} epoch(s) of {training.get('train_examples'):,} examples"
        if training.get("epochs")
        else None,
        f"{speed:,.0f} examples/s steady state" if isinstance(speed, (int, float)) else None,
        f"input wait {wait:.0%} of step time" if isinstance(wait, (int, float)) else None,
        f"{training.get('replicas', 1)} replica(s) ({training.get('strategy', '?')}, {training.get('precision_policy', '?')})",
        f"{training.get('accelerator_hours', 0.0)} accelerator-hours",
        _warm_start_part(training),
    ]
    return "Training: " + "; ".join(part for part in parts if part)


def _warm_start_part(training: dict[str, Any]) -> str | None:
    """`warm-started from PATH` or `cold start (REASON)` with `training.warm_start`; None without it."""
    if training.get("warm_started_from"):
        return f"warm-started from {training['warm_started_from']}"
    if "cold_start" in training:
        return f"cold start ({training['cold_start']})"
    return None


def _input_wait_actionable(training: dict[str, Any]) -> bool:
    """The Trainer's input-wait advice is shown only when acting on it would speed the run up."""

    on_accelerator = bool(training.get("accelerator_hours")) or training.get("peak_gpu_memory_bytes") is not None
    return input_wait_is_actionable(
        training.get("input_wait_fraction"), training.get("mean_step_seconds"), on_accelerator
    )


def tuning_line(tuning: dict[str, Any]) -> str:
    """`Tuning: best of 3 trials (score 0.7412): hidden_units=[128, 64], learning_rate=0.0031`."""
    trials = tuning.get("trials") or []
    score = trials[0].get("score") if trials else None
    scored = f" (score {score:.4f})" if isinstance(score, (int, float)) else ""
    values = ", ".join(f"{k}={_short(v)}" for k, v in sorted((tuning.get("best") or {}).items()))
    return f"Tuning: best of {len(trials)} trial(s){scored}: {values or 'no values recorded'}"


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _confusion_line(classes: list[str], rows: list[list[int]]) -> str:
    """One line: each actual class, then how many of its eval rows were predicted as each class."""
    cells = "; ".join(f"{actual} -> " + " ".join(str(n) for n in row) for actual, row in zip(classes, rows))
    return f"Confusion matrix (actual -> predicted {' '.join(classes)}): {cells}"


def worst_slice_lines(slices: list[dict[str, Any]], gates: dict[str, bool]) -> list[str]:
    """`Worst slice: binary_accuracy on region=C = 0.5510 (58 rows)`, one line per gated metric with slices;
    with `evaluation.confidence`, the slice's interval follows the value: `= 0.5510 [0.4210, 0.6810] (58 rows)`."""
    lines = []
    for name, higher in sorted(gates.items()):
        scored = [row for row in slices if name in row.get("metrics", {})]
        if not scored:
            continue
        worst = (min if higher else max)(scored, key=lambda row: row["metrics"][name])
        gated = "" if name in worst.get("gated", []) else ", not gated"
        bounds = (worst.get("intervals") or {}).get(name)
        interval = f" [{bounds[1]:.4f}, {bounds[2]:.4f}]" if bounds else ""
        lines.append(
            f"Worst slice: {name} on {worst['slice']} = {worst['metrics'][name]:.4f}{interval} "
            f"({worst['example_count']:,} rows{gated})"
        )
    return lines


def format_summary(summary: RunSummary, seconds: float, log_file: str, report: str | None = None) -> str:
    """The summary lines a person reads after a run; `report` is the HTML report's path, when one was written."""
    lines = []
    if summary.blessed is None:
        lines.append("Model: not evaluated")
    else:
        verdict = "BLESSED" if summary.blessed else "NOT BLESSED"
        # A verdict without a reason is a bug upstream; say so rather than print nothing.
        reason = "; ".join(summary.reasons) or "the Evaluator recorded no reason: see its log"
        lines.append(f"Model: {verdict} ({reason})")
    if summary.dropped_unlabelled:
        lines.append(f"Data: dropped {summary.dropped_unlabelled:,} row(s) with no label (`label.missing: drop`)")
    if summary.metrics:
        sample = (
            f" (on {summary.eval_sample[0]:,} of {summary.eval_sample[1]:,} eval rows)" if summary.eval_sample else ""
        )
        lines.append(f"Metrics{sample}: " + ", ".join(f"{k}={v}" for k, v in sorted(summary.metrics.items())))
    if interval_text(summary.confidence):
        lines.append(interval_text(summary.confidence))
    lines.extend(worst_slice_lines(summary.slices, summary.slice_gates))
    lines.extend(fairness_lines(summary.fairness))
    if summary.confusion_matrix:
        lines.append(_confusion_line(summary.classes, summary.confusion_matrix))
    if summary.changes:
        lines.append("Against the baseline: " + ", ".join(f"{k} {v:+.4f}" for k, v in sorted(summary.changes.items())))
    if summary.tuning:
        lines.append(tuning_line(summary.tuning))
    if summary.training:
        lines.append(_training_line(summary.training))
        if summary.training.get("input_advice") and _input_wait_actionable(summary.training):
            lines.append(f"Warning: {summary.training['input_advice']}")
    if summary.pushed_path:
        lines.append(
            f"Pushed: {summary.pushed_path}{'' if summary.new_version else ' (already there: no new version)'}"
        )
    else:
        lines.append("Pushed: nothing")
    version = summary.deployed.get("version")
    if version not in (None, "-1", -1):
        lines.append(f"Serving: version {version} is `stable` (verified; p99 {summary.deployed.get('p99_ms')} ms)")
    if report:
        lines.append(f"Report: {report}")
    lines.append(f"Took {seconds:.1f}s. Full log: {log_file}")
    return "\n".join(lines)
